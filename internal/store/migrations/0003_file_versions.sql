-- file_versions are what each session's read-before-write guard knows:
-- the version of each file it last read or wrote.
CREATE TABLE file_versions (
    session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    path       TEXT    NOT NULL,
    mod_time   INTEGER NOT NULL,
    size       INTEGER NOT NULL,
    sha256     TEXT    NOT NULL,
    PRIMARY KEY (session_id, path)
);
