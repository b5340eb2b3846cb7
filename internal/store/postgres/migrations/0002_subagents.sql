-- 0002_subagents, as the SQLite store's 0008: a child session started by a
-- task call keeps its parent's id in parent_id (there since 0001) and its
-- subagent type in agent; the index finds a session's children for
-- `sessions show`.
ALTER TABLE sessions ADD COLUMN agent text NOT NULL DEFAULT '';
CREATE INDEX sessions_parent ON sessions (parent_id, created_at);
