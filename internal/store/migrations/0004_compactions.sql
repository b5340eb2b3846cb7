-- compactions record which messages of a session the model's view replaces
-- with a summary; the messages themselves are kept.
CREATE TABLE compactions (
    session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    id         TEXT    NOT NULL,
    up_to_seq  INTEGER NOT NULL,
    record     TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (session_id, id)
);
CREATE INDEX compactions_session ON compactions (session_id, up_to_seq);
