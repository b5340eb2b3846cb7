-- messages_fts is the full-text index of every session's messages (user,
-- assistant and tool results; system prompts are the same in every session
-- and left out). Triggers keep it in step with messages inside the
-- transaction that stores or deletes a message. body is a message's text,
-- plus the names and arguments of the tools it calls; a row that is not
-- JSON is indexed as it is rather than failing the insert.
CREATE VIRTUAL TABLE messages_fts USING fts5(
    body,
    session_id UNINDEXED,
    seq UNINDEXED,
    role UNINDEXED,
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
WHEN new.role <> 'system'
BEGIN
    INSERT INTO messages_fts (rowid, body, session_id, seq, role) VALUES (
        new.rowid,
        CASE WHEN json_valid(new.content) THEN
            coalesce(json_extract(new.content, '$.content'), '') || coalesce((
                SELECT ' ' || group_concat(
                    coalesce(json_extract(value, '$.name'), '') || ' ' ||
                    coalesce(json_extract(value, '$.arguments'), ''), ' ')
                FROM json_each(new.content, '$.tool_calls')), '')
        ELSE new.content END,
        new.session_id, new.seq, new.role);
END;

CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
BEGIN
    DELETE FROM messages_fts WHERE rowid = old.rowid;
END;

-- Messages are append-only; should one ever be rewritten, its index row
-- goes, and the rewritten text is indexed as a new message would be.
CREATE TRIGGER messages_fts_update AFTER UPDATE ON messages
BEGIN
    DELETE FROM messages_fts WHERE rowid = old.rowid;
    INSERT INTO messages_fts (rowid, body, session_id, seq, role)
    SELECT new.rowid,
        CASE WHEN json_valid(new.content) THEN
            coalesce(json_extract(new.content, '$.content'), '') || coalesce((
                SELECT ' ' || group_concat(
                    coalesce(json_extract(value, '$.name'), '') || ' ' ||
                    coalesce(json_extract(value, '$.arguments'), ''), ' ')
                FROM json_each(new.content, '$.tool_calls')), '')
        ELSE new.content END,
        new.session_id, new.seq, new.role
    WHERE new.role <> 'system';
END;

-- The messages stored before this migration.
INSERT INTO messages_fts (rowid, body, session_id, seq, role)
SELECT rowid,
    CASE WHEN json_valid(content) THEN
        coalesce(json_extract(content, '$.content'), '') || coalesce((
            SELECT ' ' || group_concat(
                coalesce(json_extract(value, '$.name'), '') || ' ' ||
                coalesce(json_extract(value, '$.arguments'), ''), ' ')
            FROM json_each(content, '$.tool_calls')), '')
    ELSE content END,
    session_id, seq, role
FROM messages WHERE role <> 'system';
