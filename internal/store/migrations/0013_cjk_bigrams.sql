-- A CJK word of two or more characters is looked up by its pairs of
-- characters, far rarer than the characters (cjk.go): the index holds
-- each message's text as mx_claw_search_body returns it, 0012's words
-- and then the pairs of each CJK run. The triggers of 0012 are made again
-- with it, and the rows with CJK text indexed again from their messages.
DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_update;

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
WHEN new.role <> 'system'
BEGIN
    INSERT INTO messages_fts (rowid, body, session_id, seq, role) VALUES (
        new.rowid,
        mx_claw_search_body(CASE WHEN json_valid(new.content) THEN
            coalesce(json_extract(new.content, '$.content'), '') || coalesce((
                SELECT ' ' || group_concat(
                    coalesce(json_extract(value, '$.name'), '') || ' ' ||
                    coalesce(json_extract(value, '$.arguments'), ''), ' ')
                FROM json_each(new.content, '$.tool_calls')), '')
        ELSE new.content END),
        new.session_id, new.seq, new.role);
END;

CREATE TRIGGER messages_fts_update AFTER UPDATE ON messages
BEGIN
    DELETE FROM messages_fts WHERE rowid = old.rowid;
    INSERT INTO messages_fts (rowid, body, session_id, seq, role)
    SELECT new.rowid,
        mx_claw_search_body(CASE WHEN json_valid(new.content) THEN
            coalesce(json_extract(new.content, '$.content'), '') || coalesce((
                SELECT ' ' || group_concat(
                    coalesce(json_extract(value, '$.name'), '') || ' ' ||
                    coalesce(json_extract(value, '$.arguments'), ''), ' ')
                FROM json_each(new.content, '$.tool_calls')), '')
        ELSE new.content END),
        new.session_id, new.seq, new.role
    WHERE new.role <> 'system';
END;

-- The rows indexed before whose text has pairs of CJK characters: their
-- index text (0012's) gains the pairs. The text is the message's, as the
-- triggers take it.
UPDATE messages_fts SET body = t.body
FROM (SELECT m.rowid AS id, mx_claw_search_body(CASE WHEN json_valid(m.content) THEN
        coalesce(json_extract(m.content, '$.content'), '') || coalesce((
            SELECT ' ' || group_concat(
                coalesce(json_extract(value, '$.name'), '') || ' ' ||
                coalesce(json_extract(value, '$.arguments'), ''), ' ')
            FROM json_each(m.content, '$.tool_calls')), '')
    ELSE m.content END) AS body
    FROM messages m WHERE m.role <> 'system') t
WHERE t.id = messages_fts.rowid AND t.body <> messages_fts.body;
