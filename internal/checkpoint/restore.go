package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// Policy says what Restore does with a path that changed after the
// agent's change (by the user or another program).
type Policy string

// The policies of Restore.
const (
	// Leave lists such a path as a conflict and does not touch it; its
	// change records stay unreverted, so a later undo meets it again.
	Leave Policy = ""
	// Keep keeps the path as it is now ("keep mine") and counts the
	// agent's change as dealt with.
	Keep Policy = "keep"
	// Merge takes the agent's change out of the current file by a
	// three-way merge (git merge-file): base is the agent's version,
	// "ours" the current one, "theirs" the version before the agent. A
	// merge that conflicts leaves conflict markers in the file. Paths
	// that cannot be merged (not text files on every side, created or
	// deleted by the agent) stay conflicts.
	Merge Policy = "merge"
)

// ParsePolicy reads a policy's name: "", "leave", "keep" or "merge".
func ParsePolicy(s string) (Policy, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "leave":
		return Leave, nil
	case "keep", "mine", "keep-mine":
		return Keep, nil
	case "merge":
		return Merge, nil
	}
	return Leave, fmt.Errorf("unknown conflict choice %q: use merge or keep", s)
}

// Result is what Restore did.
type Result struct {
	protocol.Restore
	// Reverted are the ids of the change records dealt with: restored,
	// found already restored, merged or kept.
	Reverted []int64
}

// target is one path to put back.
type target struct {
	path   string
	want   protocol.FileState // before the first change
	expect protocol.FileState // after the last change
	ids    []int64
}

// plan groups the unreverted records by path: each path goes back to its
// state before the first of them, and is expected to be as the last of
// them left it.
func plan(records []protocol.ChangeRecord) []target {
	recs := slices.Clone(records)
	slices.SortStableFunc(recs, func(a, b protocol.ChangeRecord) int {
		if a.MessageSeq != b.MessageSeq {
			return int(a.MessageSeq - b.MessageSeq)
		}
		return int(a.ID - b.ID)
	})
	byPath := make(map[string]*target)
	var order []string
	for _, r := range recs {
		if r.Reverted {
			continue
		}
		t, ok := byPath[r.Path]
		if !ok {
			t = &target{path: r.Path, want: r.Before}
			byPath[r.Path] = t
			order = append(order, r.Path)
		}
		t.expect = r.After
		t.ids = append(t.ids, r.ID)
	}
	slices.Sort(order)
	out := make([]target, len(order))
	for i, p := range order {
		out[i] = *byPath[p]
	}
	return out
}

// Restore puts the paths of records (change records of this workspace)
// back as they were before the first of them. A path that is no longer as
// the last record left it is a conflict, handled by policy; nothing is
// ever written outside the workspace or into .git. Errors with single
// paths are reported in the result; the error is for a workspace that
// cannot be opened.
func (s *Store) Restore(ctx context.Context, records []protocol.ChangeRecord, policy Policy) (Result, error) {
	var res Result
	root, err := os.OpenRoot(s.root)
	if err != nil {
		return res, fmt.Errorf("restore in %s: %w", s.root, err)
	}
	defer root.Close()
	type step struct {
		target
		cur Entry
	}
	var removeFiles, removeDirs, makeDirs, writes []step
	for _, t := range plan(records) {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if _, err := cleanRel(t.path); err != nil {
			res.Failed = append(res.Failed, t.path+": outside the workspace, not restored")
			continue
		}
		cur, err := s.current(root, t.path)
		if err != nil {
			res.Failed = append(res.Failed, fmt.Sprintf("%s: %v", t.path, err))
			continue
		}
		switch {
		case matches(cur, t.want):
			res.Reverted = append(res.Reverted, t.ids...)
			continue
		case !t.want.Saved():
			res.Failed = append(res.Failed, t.path+": its earlier contents were not saved (over the size limit); left as it is")
			continue
		case !matches(cur, t.expect):
			s.conflict(ctx, root, t, cur, policy, &res)
			continue
		}
		st := step{t, cur}
		switch {
		case !t.want.Exists() && cur.IsDir():
			removeDirs = append(removeDirs, st)
		case !t.want.Exists():
			removeFiles = append(removeFiles, st)
		case t.want.IsDir():
			makeDirs = append(makeDirs, st)
		default:
			writes = append(writes, st)
		}
	}
	done := func(st step, err error) {
		if err != nil {
			res.Failed = append(res.Failed, fmt.Sprintf("%s: %v", st.path, err))
			return
		}
		res.Restored = append(res.Restored, st.path)
		res.Reverted = append(res.Reverted, st.ids...)
	}
	for _, st := range removeFiles {
		done(st, removeIfPresent(root, st.path))
	}
	// Deepest first, so a directory's subdirectories go before it.
	slices.SortFunc(removeDirs, func(a, b step) int { return strings.Compare(b.path, a.path) })
	for _, st := range removeDirs {
		err := root.Remove(st.path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("not removed: it holds files made since (%w)", err)
		}
		done(st, ignoreNotExist(err))
	}
	for _, st := range makeDirs {
		done(st, makeDir(root, st.path, st.cur, st.want))
	}
	for _, st := range writes {
		done(st, s.write(root, st.path, st.cur, st.want))
	}
	slices.Sort(res.Restored)
	return res, nil
}

// conflict handles a path changed since the agent's change.
func (s *Store) conflict(ctx context.Context, root *os.Root, t target, cur Entry, policy Policy, res *Result) {
	switch policy {
	case Keep:
		res.Kept = append(res.Kept, t.path)
		res.Reverted = append(res.Reverted, t.ids...)
		return
	case Merge:
		merged, conflicts, err := s.merge(ctx, root, t, cur)
		switch {
		case err == nil && conflicts:
			res.MergeConflicts = append(res.MergeConflicts, t.path)
			res.Merged = append(res.Merged, t.path)
			res.Reverted = append(res.Reverted, t.ids...)
			return
		case err == nil && merged:
			res.Merged = append(res.Merged, t.path)
			res.Reverted = append(res.Reverted, t.ids...)
			return
		case err != nil:
			res.Conflicts = append(res.Conflicts, fmt.Sprintf("%s (changed since the agent's change; cannot merge: %v)", t.path, err))
			return
		}
	}
	res.Conflicts = append(res.Conflicts, t.path)
}

// current returns what is at rel now, its contents saved (so that what a
// merge or a restore replaces is never lost). A file too large to save
// gets no OID and matches nothing but absence.
func (s *Store) current(root *os.Root, rel string) (Entry, error) {
	fi, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return Entry{}, nil
	}
	if err != nil {
		return Entry{}, err
	}
	var e Entry
	e.Mode = modeOf(fi)
	if e.Mode == 0 {
		return Entry{}, fmt.Errorf("not a file, symlink or directory")
	}
	if e.IsDir() {
		return e, nil
	}
	e.Size = fi.Size()
	if e.Mode&protocol.ModeTypeMask == protocol.ModeRegular && e.Size > s.lim.MaxFileSize {
		return e, nil
	}
	var data []byte
	if e.Mode&protocol.ModeTypeMask == protocol.ModeSymlink {
		target, err := root.Readlink(rel)
		if err != nil {
			return Entry{}, err
		}
		data = []byte(target)
	} else if data, err = root.ReadFile(rel); err != nil {
		return Entry{}, err
	}
	e.Size = int64(len(data))
	if e.OID, err = s.obj.put(data); err != nil {
		return Entry{}, err
	}
	return e, nil
}

// matches reports whether the current entry is the state st. Directories
// match by type: their permissions are not worth a conflict.
func matches(cur Entry, st protocol.FileState) bool {
	if cur.IsDir() || st.IsDir() {
		return cur.IsDir() && st.IsDir()
	}
	return cur.FileState.Same(st)
}

// write puts the file or symlink want at rel, replacing cur.
func (s *Store) write(root *os.Root, rel string, cur Entry, want protocol.FileState) error {
	data, err := s.obj.get(want.OID)
	if err != nil {
		return err
	}
	if cur.IsDir() {
		// A directory made since stands where the file was: it goes if
		// it is empty.
		if err := root.Remove(rel); err != nil {
			return fmt.Errorf("a directory is in the way (%w)", err)
		}
	}
	if dir := path.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	if want.Mode&protocol.ModeTypeMask == protocol.ModeSymlink {
		if err := removeIfPresent(root, rel); err != nil {
			return err
		}
		return root.Symlink(string(data), rel)
	}
	perm := fs.FileMode(want.Mode & 0o777)
	return writeInRoot(root, rel, data, perm)
}

// writeInRoot writes data to rel through a temporary file in the same
// directory and a rename; a symlink at rel is replaced, not followed.
func writeInRoot(root *os.Root, rel string, data []byte, perm fs.FileMode) error {
	tmp := path.Join(path.Dir(rel), ".mx-claw-restore-"+randomSuffix())
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		root.Remove(tmp)
		return err
	}
	if err := root.Chmod(tmp, perm); err != nil {
		root.Remove(tmp)
		return err
	}
	if err := root.Rename(tmp, rel); err != nil {
		root.Remove(tmp)
		return err
	}
	return nil
}

// makeDir puts the directory want at rel, where cur is.
func makeDir(root *os.Root, rel string, cur Entry, want protocol.FileState) error {
	perm := fs.FileMode(want.Mode & 0o777)
	if perm == 0 {
		perm = 0o755
	}
	if cur.Exists() && !cur.IsDir() {
		if err := root.Remove(rel); err != nil {
			return err
		}
	}
	if cur.IsDir() {
		return root.Chmod(rel, perm)
	}
	if err := root.MkdirAll(rel, perm); err != nil {
		return err
	}
	return root.Chmod(rel, perm)
}

func removeIfPresent(root *os.Root, rel string) error {
	return ignoreNotExist(root.Remove(rel))
}

func ignoreNotExist(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// merge takes the agent's change out of the current file with git
// merge-file. It reports whether it wrote a merge and whether that merge
// has conflict markers; an error means the path cannot be merged.
func (s *Store) merge(ctx context.Context, root *os.Root, t target, cur Entry) (merged, conflicts bool, err error) {
	regular := func(st protocol.FileState) bool {
		return st.Mode&protocol.ModeTypeMask == protocol.ModeRegular && st.OID != ""
	}
	switch {
	case !regular(t.want) || !regular(t.expect) || !regular(cur.FileState):
		return false, false, errors.New("only files the agent modified (not created, deleted or turned into something else) can be merged")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		return false, false, errors.New("git is not installed")
	}
	dir, err := os.MkdirTemp("", "mx-claw-merge-")
	if err != nil {
		return false, false, err
	}
	defer os.RemoveAll(dir)
	files := map[string]string{"yours": cur.OID, "agent": t.expect.OID, "before": t.want.OID}
	for name, oid := range files {
		data, err := s.obj.get(oid)
		if err != nil {
			return false, false, err
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return false, false, err
		}
	}
	cmd := exec.CommandContext(ctx, git, "merge-file", "-p",
		"-L", "yours", "-L", "the agent's change", "-L", "before the agent's change",
		filepath.Join(dir, "yours"), filepath.Join(dir, "agent"), filepath.Join(dir, "before"))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C"}
	out, err := cmd.Output()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() > 0 && exit.ExitCode() < 128:
		conflicts = true
	default:
		msg := err.Error()
		if exit != nil && len(exit.Stderr) > 0 {
			msg = strings.TrimSpace(string(exit.Stderr))
		}
		return false, false, errors.New(msg)
	}
	if err := writeInRoot(root, t.path, out, fs.FileMode(cur.Mode&0o777)); err != nil {
		return false, false, err
	}
	return true, conflicts, nil
}
