-- 0001_init: the first schema of the mx-claw store.
--
-- Timestamps are unix milliseconds (INTEGER, UTC). JSON columns hold the
-- encoding of the protocol package's types, as TEXT.

CREATE TABLE sessions (
    id               TEXT    PRIMARY KEY,
    title            TEXT    NOT NULL DEFAULT '',
    workspace        TEXT    NOT NULL DEFAULT '',
    model            TEXT    NOT NULL DEFAULT '',
    status           TEXT    NOT NULL DEFAULT 'idle',
    parent_id        TEXT    NOT NULL DEFAULT '',
    last_error       TEXT    NOT NULL DEFAULT '',
    input_tokens     INTEGER NOT NULL DEFAULT 0,
    output_tokens    INTEGER NOT NULL DEFAULT 0,
    cached_tokens    INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    message_count    INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
);
CREATE INDEX sessions_workspace_updated ON sessions (workspace, updated_at);
CREATE INDEX sessions_updated ON sessions (updated_at);

-- messages is the append-only transcript; content is a protocol.Message.
CREATE TABLE messages (
    session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    role       TEXT    NOT NULL,
    content    TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (session_id, seq)
);

-- events are the stored events of a session; payload is a protocol.Event,
-- sequence included.
CREATE TABLE events (
    session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    sequence   INTEGER NOT NULL,
    type       TEXT    NOT NULL,
    payload    TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (session_id, sequence)
);

-- leases has no foreign key: a lease may be taken before its session row
-- is written.
CREATE TABLE leases (
    session_id  TEXT    PRIMARY KEY,
    owner       TEXT    NOT NULL,
    expires_at  INTEGER NOT NULL,
    acquired_at INTEGER NOT NULL
);

-- approvals: call is a protocol.ToolCall, remaining a []protocol.ToolCall.
CREATE TABLE approvals (
    id          TEXT    PRIMARY KEY,
    session_id  TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    turn_id     TEXT    NOT NULL DEFAULT '',
    call        TEXT    NOT NULL,
    summary     TEXT    NOT NULL DEFAULT '',
    remaining   TEXT    NOT NULL DEFAULT '[]',
    status      TEXT    NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'approved', 'rejected', 'cancelled')),
    feedback    TEXT    NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    resolved_at INTEGER
);
CREATE INDEX approvals_session_status ON approvals (session_id, status);

CREATE TABLE queued_inputs (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    content    TEXT    NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX queued_inputs_session ON queued_inputs (session_id, id);

-- permission_grants are "always allow" rules; scope is a project path, or
-- '' for every project.
CREATE TABLE permission_grants (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    scope      TEXT    NOT NULL DEFAULT '',
    tool       TEXT    NOT NULL,
    pattern    TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    UNIQUE (scope, tool, pattern)
);

-- permission_audit records every permission decision; it outlives the
-- session it names, so it has no foreign key.
CREATE TABLE permission_audit (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT    NOT NULL DEFAULT '',
    tool       TEXT    NOT NULL,
    summary    TEXT    NOT NULL DEFAULT '',
    decision   TEXT    NOT NULL,
    source     TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL
);
CREATE INDEX permission_audit_session ON permission_audit (session_id, created_at);
