-- trusted_workspaces are the folders whose own settings (project rules,
-- hooks, modes) the user has agreed to apply.
CREATE TABLE trusted_workspaces (
    path       TEXT    PRIMARY KEY,
    created_at INTEGER NOT NULL
);
