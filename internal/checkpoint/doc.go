// Package checkpoint saves the state of a workspace before each step that
// may change it and puts it back on undo, rewind: "never losing a user's
// work".
//
// # What is saved
//
// Before a tool call that may write, the agent takes a snapshot; after the
// call, another; Diff of the two is what the call changed, recorded with
// its result (store.History). For a file tool the snapshot covers the
// paths it names (SnapshotPaths, ignored files included); for a command
// that is not read-only, or any other tool that may write, it covers the
// whole workspace (Snapshot): every file git would not ignore (tracked and
// untracked alike, read through internal/ignore, .git never). Files over
// Limits.MaxFileSize, and what is past Limits.MaxScanBytes in one
// snapshot, are recorded by size and time only; their changes are shown,
// flagged "not saved", and cannot be undone. Files git ignores are not
// seen by whole-workspace snapshots at all: a command's changes to them
// are neither recorded nor undone. Both are said where changes are shown.
//
// # Where
//
// Each workspace has a store under $MX_CLAW_HOME/checkpoints/<key>/ (key:
// the first 16 hex digits of the SHA-256 of the workspace root). It is laid
// out as a bare git repository, and contents are git's loose blob objects
// (zlib of "blob N\0" + bytes, named by their SHA-1), written in-process:
// `git --git-dir=<store> cat-file -p <oid>` reads any saved version, the
// same contents are stored once, and no git binary is needed to save or
// restore. Next to them is the stat cache of the last whole snapshot
// (mx-claw-index): a file whose mode, size, mtime, ctime and inode are
// unchanged is not read again, so after the first snapshot a checkpoint
// costs a walk and an lstat per file; files changed within 100 ms of a
// snapshot are read again by the next one (git's "racy" entries).
//
// Why not the git binary with GIT_DIR, GIT_WORK_TREE and an index of its
// own (`git add -A && git write-tree`)? Measured on a 10,000-file
// workspace here, that took 60–210 ms per checkpoint after the first
// (two processes, index refresh, tree writing), could not skip large
// files before hashing them, and needs git installed. Why not the store's
// file_versions? They are the read-before-write guard's hashes, not
// contents, and SQLite is the wrong place for megabytes of file versions.
//
// # Putting back
//
// Restore takes change records, oldest first, and puts each path back as
// it was before the first of them — files, symlinks (their target), modes,
// directories made or removed, renames (a deletion and a creation) — but
// only where the path is still as the last change left it. A path changed
// since by someone else is a conflict: listed and left alone (Leave), kept
// as it is on request (Keep), or merged with `git merge-file` so the
// agent's change comes out and the user's stays (Merge; what is replaced
// is saved first). Writes go through an os.Root of the workspace: no path,
// symlink or ".." leads outside it, and nothing is written in .git.
//
// Who may import it: the agent (to take checkpoints and restore) and the
// app's wiring and CLI (to open the manager and collect garbage). It
// imports protocol and ignore.
package checkpoint
