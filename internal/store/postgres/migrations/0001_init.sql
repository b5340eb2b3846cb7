-- 0001_init: the PostgreSQL schema of the mx-claw store, equal in meaning
-- to the SQLite store's migrations 0001 to 0007 (see internal/store).
--
-- JSON columns are text holding the protocol package's encodings as they
-- were written, so a record that cannot be decoded can be set aside as it
-- is (quarantine). Times are timestamptz, to the millisecond; a file's
-- mod_time is unix nanoseconds.

CREATE TABLE sessions (
    id               text             PRIMARY KEY,
    -- n orders sessions updated in the same millisecond by creation.
    n                bigint           GENERATED ALWAYS AS IDENTITY,
    title            text             NOT NULL DEFAULT '',
    workspace        text             NOT NULL DEFAULT '',
    model            text             NOT NULL DEFAULT '',
    status           text             NOT NULL DEFAULT 'idle',
    parent_id        text             NOT NULL DEFAULT '',
    last_error       text             NOT NULL DEFAULT '',
    input_tokens     bigint           NOT NULL DEFAULT 0,
    output_tokens    bigint           NOT NULL DEFAULT 0,
    cached_tokens    bigint           NOT NULL DEFAULT 0,
    reasoning_tokens bigint           NOT NULL DEFAULT 0,
    message_count    bigint           NOT NULL DEFAULT 0,
    cost_usd         double precision NOT NULL DEFAULT 0,
    context_percent  double precision NOT NULL DEFAULT 0,
    -- The last message Seq and event Sequence given out. Updating them
    -- locks the session's row, which serialises the appends of one
    -- session across every process; a number is never given twice, even
    -- when its record is quarantined.
    last_message_seq bigint           NOT NULL DEFAULT 0,
    last_event_seq   bigint           NOT NULL DEFAULT 0,
    created_at       timestamptz      NOT NULL,
    updated_at       timestamptz      NOT NULL
);
CREATE INDEX sessions_workspace_updated ON sessions (workspace, updated_at);
CREATE INDEX sessions_updated ON sessions (updated_at);
CREATE INDEX sessions_status ON sessions (status);

CREATE TABLE messages (
    session_id text        NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq        bigint      NOT NULL,
    role       text        NOT NULL,
    content    text        NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (session_id, seq)
);

CREATE TABLE events (
    session_id text        NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    sequence   bigint      NOT NULL,
    type       text        NOT NULL,
    payload    text        NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (session_id, sequence)
);

-- leases: one row per session being written. host and pid come from the
-- owner's name, boot_id is the kernel boot id of the host that took it:
-- a holder is judged gone before its lease expires only on its own host
-- and boot, when its process no longer runs. No foreign key: a lease may
-- be taken before its session row is written.
CREATE TABLE leases (
    session_id  text        PRIMARY KEY,
    owner       text        NOT NULL,
    host        text        NOT NULL DEFAULT '',
    pid         integer     NOT NULL DEFAULT 0,
    boot_id     text        NOT NULL DEFAULT '',
    expires_at  timestamptz NOT NULL,
    acquired_at timestamptz NOT NULL
);

-- mx_claw_check_lease is the fencing check of every write made under a
-- lease: it locks the lease row (FOR SHARE, so no takeover commits before
-- the write's transaction does) and raises an error, which aborts the
-- transaction, unless the owner holds the lease unexpired at now (the
-- database's clock when null).
CREATE FUNCTION mx_claw_check_lease(p_session text, p_owner text, p_now timestamptz)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    held  text;
    until timestamptz;
BEGIN
    SELECT owner, expires_at INTO held, until FROM leases WHERE session_id = p_session FOR SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'MXL01', MESSAGE = format('no lease held by %s', p_owner);
    END IF;
    IF held <> p_owner THEN
        RAISE EXCEPTION USING ERRCODE = 'MXL02', MESSAGE = format('the lease of %s was taken over by %s', p_owner, held);
    END IF;
    IF until <= COALESCE(p_now, statement_timestamp()) THEN
        RAISE EXCEPTION USING ERRCODE = 'MXL03', MESSAGE = format('the lease of %s expired at %s', p_owner, until);
    END IF;
END $$;

CREATE TABLE approvals (
    id          text        PRIMARY KEY,
    n           bigint      GENERATED ALWAYS AS IDENTITY,
    session_id  text        NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    turn_id     text        NOT NULL DEFAULT '',
    call        text        NOT NULL,
    summary     text        NOT NULL DEFAULT '',
    remaining   text        NOT NULL DEFAULT '[]',
    status      text        NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'approved', 'rejected', 'cancelled')),
    feedback    text        NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL,
    resolved_at timestamptz
);
CREATE INDEX approvals_session_status ON approvals (session_id, status);

CREATE TABLE queued_inputs (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id text        NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    content    text        NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX queued_inputs_session ON queued_inputs (session_id, id);

CREATE TABLE permission_grants (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    scope      text        NOT NULL DEFAULT '',
    tool       text        NOT NULL,
    pattern    text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    UNIQUE (scope, tool, pattern)
);

-- permission_audit outlives the session it names: no foreign key.
CREATE TABLE permission_audit (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id text        NOT NULL DEFAULT '',
    tool       text        NOT NULL,
    summary    text        NOT NULL DEFAULT '',
    decision   text        NOT NULL,
    source     text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL
);
CREATE INDEX permission_audit_session ON permission_audit (session_id, created_at);

CREATE TABLE trusted_workspaces (
    path       text        PRIMARY KEY,
    identity   text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL
);

CREATE TABLE file_versions (
    session_id text   NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    path       text   NOT NULL,
    mod_time   bigint NOT NULL,
    size       bigint NOT NULL,
    sha256     text   NOT NULL,
    PRIMARY KEY (session_id, path)
);

CREATE TABLE compactions (
    session_id text        NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    id         text        NOT NULL,
    up_to_seq  bigint      NOT NULL,
    record     text        NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (session_id, id)
);
CREATE INDEX compactions_session ON compactions (session_id, up_to_seq);

CREATE TABLE quarantine (
    id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tbl            text        NOT NULL,
    session_id     text        NOT NULL DEFAULT '',
    key            text        NOT NULL,
    seq            bigint      NOT NULL DEFAULT 0,
    content        bytea       NOT NULL,
    error          text        NOT NULL,
    quarantined_at timestamptz NOT NULL,
    resolved       text        NOT NULL DEFAULT ''
);
CREATE INDEX quarantine_session ON quarantine (session_id, tbl, seq);
