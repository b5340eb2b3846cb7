-- file_changes are the workspace files each tool call changed, as the
-- checkpoints taken around it saw them (issue 16). A state is a mode (0:
-- nothing there) and the git blob id of the contents in the workspace's
-- checkpoint store ('' for a directory or contents not saved).
-- message_seq is the Seq of the tool result the change was stored with.
-- reverted_at is when an undo or rewind put the path back (0: not yet).
CREATE TABLE file_changes (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id   TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    turn_id      TEXT    NOT NULL DEFAULT '',
    tool_call_id TEXT    NOT NULL DEFAULT '',
    message_seq  INTEGER NOT NULL,
    path         TEXT    NOT NULL,
    before_mode  INTEGER NOT NULL DEFAULT 0,
    before_oid   TEXT    NOT NULL DEFAULT '',
    before_size  INTEGER NOT NULL DEFAULT 0,
    after_mode   INTEGER NOT NULL DEFAULT 0,
    after_oid    TEXT    NOT NULL DEFAULT '',
    after_size   INTEGER NOT NULL DEFAULT 0,
    reverted_at  INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL
);
CREATE INDEX file_changes_session ON file_changes (session_id, message_seq);

-- rewinds take the model's view of a conversation back: messages with
-- to_seq <= seq <= from_seq are no longer sent; they stay stored.
CREATE TABLE rewinds (
    session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    to_seq     INTEGER NOT NULL,
    from_seq   INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (session_id, from_seq)
);

-- session_sources record where an imported session came from (another
-- agent's session id and file), so a second import does not duplicate it.
CREATE TABLE session_sources (
    source     TEXT    NOT NULL,
    source_id  TEXT    NOT NULL,
    session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    path       TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    PRIMARY KEY (source, source_id)
);
CREATE INDEX session_sources_session ON session_sources (session_id);
