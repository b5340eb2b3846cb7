-- Search finds Chinese, Japanese and Korean words inside longer runs of
-- those scripts (cjk.go): the index holds each message's text as
-- mx_claw_search_index returns it, every CJK character a word of its own
-- and full-width forms folded to ASCII. The triggers of 0010 are made
-- again with it, and the rows indexed before are indexed again (only those
-- the function changes: text with CJK or full-width characters).
DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_update;

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
WHEN new.role <> 'system'
BEGIN
    INSERT INTO messages_fts (rowid, body, session_id, seq, role) VALUES (
        new.rowid,
        mx_claw_search_index(CASE WHEN json_valid(new.content) THEN
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
        mx_claw_search_index(CASE WHEN json_valid(new.content) THEN
            coalesce(json_extract(new.content, '$.content'), '') || coalesce((
                SELECT ' ' || group_concat(
                    coalesce(json_extract(value, '$.name'), '') || ' ' ||
                    coalesce(json_extract(value, '$.arguments'), ''), ' ')
                FROM json_each(new.content, '$.tool_calls')), '')
        ELSE new.content END),
        new.session_id, new.seq, new.role
    WHERE new.role <> 'system';
END;

-- The rows indexed before: body is still the message's text.
UPDATE messages_fts SET body = mx_claw_search_index(body)
WHERE mx_claw_search_index(body) <> body;
