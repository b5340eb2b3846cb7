-- 0003_checkpoints, as the SQLite store's 0009 (issue 16).
--
-- file_changes are the workspace files each tool call changed, as the
-- checkpoints taken around it saw them. A state is a mode (0: nothing
-- there) and the git blob id of the contents in the workspace's checkpoint
-- store ('' for a directory or contents not saved). message_seq is the Seq
-- of the tool result the change was stored with. reverted_at is when an
-- undo or rewind put the path back (null: not yet).
CREATE TABLE file_changes (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id   text        NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    turn_id      text        NOT NULL DEFAULT '',
    tool_call_id text        NOT NULL DEFAULT '',
    message_seq  bigint      NOT NULL,
    path         text        NOT NULL,
    before_mode  bigint      NOT NULL DEFAULT 0,
    before_oid   text        NOT NULL DEFAULT '',
    before_size  bigint      NOT NULL DEFAULT 0,
    after_mode   bigint      NOT NULL DEFAULT 0,
    after_oid    text        NOT NULL DEFAULT '',
    after_size   bigint      NOT NULL DEFAULT 0,
    reverted_at  timestamptz,
    created_at   timestamptz NOT NULL
);
CREATE INDEX file_changes_session ON file_changes (session_id, message_seq);

-- rewinds take the model's view of a conversation back: messages with
-- to_seq <= seq <= from_seq are no longer sent; they stay stored.
CREATE TABLE rewinds (
    session_id text        NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    to_seq     bigint      NOT NULL,
    from_seq   bigint      NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (session_id, from_seq)
);

-- session_sources record where an imported session came from (another
-- agent's session id and file), so a second import does not duplicate it.
CREATE TABLE session_sources (
    source     text        NOT NULL,
    source_id  text        NOT NULL,
    session_id text        NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    path       text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    PRIMARY KEY (source, source_id)
);
CREATE INDEX session_sources_session ON session_sources (session_id);
