-- A trusted workspace is bound to the folder it was trusted as, not only to
-- its path: identity is what app.TrustIdentity made of the folder then
-- (its device and inode, and a marker kept in its git directory). A
-- different folder at the same path later (another repository cloned
-- there) does not match. Rows from before this migration have none and
-- match no folder: such a workspace must be trusted again.
ALTER TABLE trusted_workspaces ADD COLUMN identity TEXT NOT NULL DEFAULT '';
