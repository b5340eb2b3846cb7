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
// On Linux even that walk is skipped: the first whole snapshot of a
// process watches each directory with inotify before reading it, and the
// next ones read the queued events and look again only at the paths they
// name. The kernel queues an event within the system call that makes a
// change, so once a command has exited its changes are all in the queue;
// writes through mmap are covered by the close that follows them.
// Anything the events cannot say for sure — a directory made, moved or
// removed, a .gitignore or .git/info/exclude changed, the queue
// overflowed, the user's inotify watches used up — makes the next
// snapshot walk the whole workspace again (and watch anew). Measured on a
// 10,000-file workspace on the project's 2-core VM under a load of 10–16
// (an lstat costs 2–3 µs of system time there): a checkpoint before a
// command took 0.0014 ms with the watcher, and 52 ms of CPU (50–270 ms of
// wall time, with the load) walking; after a command that changed one
// file, 16 ms with the watcher, 112 ms walking; the first snapshot, which
// reads and saves everything, 4–11 s.
//
// That first snapshot need not make a command wait: WarmUp takes it in
// the background from when a session's turn starts (warm.go), paced to at
// most two thirds of one core, and the first Snapshot takes over what it
// has saved so far (or its finished snapshot and watcher) and reads only
// the rest.
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
