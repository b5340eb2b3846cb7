-- quarantine keeps the records that could not be decoded (a message,
-- event, compaction record or pending approval whose JSON is damaged),
-- moved out of their table so that one bad row does not make its session
-- unusable. Nothing is thrown away: content is the row's raw JSON column.
-- seq is the record's Seq or Sequence (0 for the others), so those numbers
-- are never given to a new record; key is the record's number or id as
-- text. resolved says what `mx-claw doctor --repair` did with the row
-- ('' while it waits: 'restored', or the file it was saved to).
CREATE TABLE quarantine (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    tbl            TEXT    NOT NULL,
    session_id     TEXT    NOT NULL DEFAULT '',
    key            TEXT    NOT NULL,
    seq            INTEGER NOT NULL DEFAULT 0,
    content        BLOB    NOT NULL,
    error          TEXT    NOT NULL,
    quarantined_at INTEGER NOT NULL,
    resolved       TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX quarantine_session ON quarantine (session_id, tbl, seq);
