package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// maxSymlinkHops bounds how many symlinks one path may pass through, like
// the kernel's ELOOP limit.
const maxSymlinkHops = 40

// Workspace confines file access to a root directory and any number of
// extra allowed directories. Every path a tool is given goes through
// [Workspace.Resolve] (or [Workspace.ResolveForWrite]), which follows
// symlinks and refuses anything that ends up outside; the file operations
// then go through an [os.Root] opened on the directory that contains the
// path, so a symlink swapped in between the check and the use still cannot
// lead outside.
//
// Paths are compared by their components after symlinks are resolved, so
// "<root>-evil/x" is outside "<root>". On case-insensitive file systems a
// path spelt with a different case than the root is refused, which is safe
// but may surprise.
//
// A Workspace is immutable and safe for concurrent use.
type Workspace struct {
	root    string   // absolute and canonical
	allowed []string // absolute and canonical, none inside root
	temps   *TempJournal
}

// WithTempJournal returns a copy of w whose atomic writes record their
// temporary files in j, so a later start can remove those a killed process
// left (see TempJournal).
func (w *Workspace) WithTempJournal(j *TempJournal) *Workspace {
	c := *w
	c.temps = j
	return &c
}

// target is a resolved path.
type target struct {
	abs  string // canonical absolute path
	base string // the root or the allowed directory holding abs
	sub  string // abs relative to base; "." for base itself
	rel  string // abs as shown to people and models, see Resolve
}

// NewWorkspace returns a workspace rooted at root, which must be an
// existing directory; allowed names further directories (they must exist
// too) whose contents tools may also use. All are made absolute and
// symlink-resolved.
func NewWorkspace(root string, allowed ...string) (*Workspace, error) {
	r, err := canonicalDir(root)
	if err != nil {
		return nil, fmt.Errorf("workspace root: %w", err)
	}
	w := &Workspace{root: r}
	for _, a := range allowed {
		d, err := canonicalDir(a)
		if err != nil {
			return nil, fmt.Errorf("allowed directory: %w", err)
		}
		if within(r, d) || slices.Contains(w.allowed, d) {
			continue
		}
		w.allowed = append(w.allowed, d)
	}
	return w, nil
}

// canonicalDir makes dir absolute and symlink-free and checks that it is a
// directory.
func canonicalDir(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("empty path")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	abs, err = filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", abs)
	}
	return abs, nil
}

// Root returns the absolute, symlink-resolved workspace root.
func (w *Workspace) Root() string { return w.root }

// Allowed returns the absolute, symlink-resolved extra directories tools
// may use (those inside the root are left out). The slice is a copy.
func (w *Workspace) Allowed() []string { return slices.Clone(w.allowed) }

// Resolve turns a path given by a model or a person into the canonical
// absolute path it names, following symlinks (for a path that does not
// exist yet, those of its longest existing parent), and refuses it with an
// error matching [ErrOutsideWorkspace] unless it lies inside the root or an
// allowed directory. A relative p is taken against the root; an absolute p
// is accepted if it is inside. rel is how to show the path: relative to the
// root with forward slashes ("." for the root itself), or the absolute
// path for one inside an allowed directory outside the root. rel can be
// passed back to Resolve.
func (w *Workspace) Resolve(p string) (abs, rel string, err error) {
	t, err := w.resolve(p)
	if err != nil {
		return "", "", err
	}
	return t.abs, t.rel, nil
}

// ResolveForWrite is [Workspace.Resolve] for a path about to be written: it
// also refuses, with an error matching [ErrGitInternals], any path with a
// ".git" component (in any case), so neither the repository's own .git
// nor a nested repository's or submodule's is ever written. ".gitignore"
// and the like are fine.
func (w *Workspace) ResolveForWrite(p string) (abs, rel string, err error) {
	t, err := w.resolveForWrite(p)
	if err != nil {
		return "", "", err
	}
	return t.abs, t.rel, nil
}

func (w *Workspace) resolve(p string) (target, error) {
	if p == "" {
		return target{}, errors.New("empty path")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return target{}, fmt.Errorf("path %q contains a NUL byte", p)
	}
	lex := p
	if !filepath.IsAbs(lex) {
		lex = filepath.Join(w.root, lex)
	}
	lex = filepath.Clean(lex)

	abs, err := w.canonical(lex)
	if err != nil {
		return target{}, fmt.Errorf("resolve %q: %w", p, err)
	}
	base := w.baseOf(abs)
	if base == "" {
		e := &outsideError{path: p, root: w.root}
		if w.baseOf(lex) != "" {
			e.resolved = abs
		}
		return target{}, e
	}
	sub, err := filepath.Rel(base, abs)
	if err != nil {
		return target{}, fmt.Errorf("resolve %q: %w", p, err)
	}
	t := target{abs: abs, base: base, sub: sub, rel: abs}
	if base == w.root {
		t.rel = filepath.ToSlash(sub)
	}
	return t, nil
}

func (w *Workspace) resolveForWrite(p string) (target, error) {
	t, err := w.resolve(p)
	if err != nil {
		return target{}, err
	}
	for _, c := range strings.Split(t.sub, string(filepath.Separator)) {
		if strings.EqualFold(c, ".git") {
			return target{}, &gitError{rel: t.rel}
		}
	}
	return t, nil
}

// baseOf returns the root or allowed directory holding p, or "".
func (w *Workspace) baseOf(p string) string {
	if within(w.root, p) {
		return w.root
	}
	for _, a := range w.allowed {
		if within(a, p) {
			return a
		}
	}
	return ""
}

// within reports whether p is base or beneath it, comparing whole path
// components. Both must be clean and absolute.
func within(base, p string) bool {
	rel, err := filepath.Rel(base, p)
	if err != nil || filepath.IsAbs(rel) {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// canonical resolves every symlink in the clean absolute path p, component
// by component, like realpath -m: components that do not exist are kept as
// they are, and a dangling symlink is followed to where it points, so it
// cannot be used to create a file outside. The walk starts at the root or
// allowed directory that lexically holds p, which are already canonical.
func (w *Workspace) canonical(p string) (string, error) {
	var resolved string
	var rest []string
	if base := w.baseOf(p); base != "" {
		resolved = base
		sub, _ := filepath.Rel(base, p)
		rest = splitPath(sub)
	} else {
		vol := filepath.VolumeName(p)
		resolved = vol + string(filepath.Separator)
		rest = splitPath(p[len(vol):])
	}

	hops := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				resolved = next
				continue
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		hops++
		if hops > maxSymlinkHops {
			return "", fmt.Errorf("too many levels of symbolic links at %s", next)
		}
		link, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(link) {
			vol := filepath.VolumeName(link)
			resolved = vol + string(filepath.Separator)
			link = link[len(vol):]
		}
		rest = append(splitPath(link), rest...)
	}
	return resolved, nil
}

// splitPath splits p at separators, dropping empty components.
func splitPath(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool {
		return r == filepath.Separator || r == '/'
	})
}

// openRoot opens an os.Root on the directory holding t.
func openRoot(t target) (*os.Root, error) {
	r, err := os.OpenRoot(t.base)
	if err != nil {
		return nil, fmt.Errorf("open workspace directory %s: %w", t.base, err)
	}
	return r, nil
}

// pathError re-labels err with the display path rel, so errors shown to
// the model do not carry absolute paths, while errors.Is still sees the
// cause.
func pathError(op, rel string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &fs.PathError{Op: op, Path: rel, Err: err}
}

// withRoot resolves p and runs f with a traversal-resistant root opened at
// the resolved base; the root is closed when f returns.
func (w *Workspace) withRoot(p string, f func(r *os.Root, t target) error) error {
	t, err := w.resolve(p)
	if err != nil {
		return err
	}
	r, err := openRoot(t)
	if err != nil {
		return err
	}
	defer r.Close()
	return f(r, t)
}

// Open opens the file or directory at p (any path Resolve accepts) for
// reading. The caller closes it.
func (w *Workspace) Open(p string) (*os.File, error) {
	var file *os.File
	err := w.withRoot(p, func(r *os.Root, t target) error {
		f, err := r.Open(t.sub)
		if err != nil {
			return pathError("open", t.rel, err)
		}
		file = f
		return nil
	})
	return file, err
}

// ReadFile returns the contents of the file at p.
func (w *Workspace) ReadFile(p string) ([]byte, error) {
	var data []byte
	err := w.withRoot(p, func(r *os.Root, t target) (err error) {
		if data, err = r.ReadFile(t.sub); err != nil {
			return pathError("read", t.rel, err)
		}
		return nil
	})
	return data, err
}

// Stat returns information about the file at p, following symlinks.
func (w *Workspace) Stat(p string) (fs.FileInfo, error) {
	var fi fs.FileInfo
	err := w.withRoot(p, func(r *os.Root, t target) (err error) {
		if fi, err = r.Stat(t.sub); err != nil {
			return pathError("stat", t.rel, err)
		}
		return nil
	})
	return fi, err
}

// ReadDir returns the entries of the directory at p, sorted by name. The
// entries describe symlinks as symlinks (see [Workspace.Readlink]).
func (w *Workspace) ReadDir(p string) ([]fs.DirEntry, error) {
	var entries []fs.DirEntry
	err := w.withRoot(p, func(r *os.Root, t target) error {
		f, err := r.Open(t.sub)
		if err != nil {
			return pathError("open", t.rel, err)
		}
		defer f.Close()
		if entries, err = f.ReadDir(-1); err != nil {
			return pathError("readdir", t.rel, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

// Readlink returns the target of the symlink at p itself (p's parent is
// resolved, its last component is not followed). The target is returned
// as stored and may point outside the workspace; reading through it is
// still confined.
func (w *Workspace) Readlink(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	dir, name := filepath.Split(filepath.Clean(p))
	if name == "" || name == "." || name == ".." {
		return "", fmt.Errorf("readlink %s: not a symlink", p)
	}
	if dir == "" {
		dir = "."
	}
	var link string
	err := w.withRoot(dir, func(r *os.Root, t target) (err error) {
		if link, err = r.Readlink(filepath.Join(t.sub, name)); err != nil {
			return pathError("readlink", joinRel(t.rel, name), err)
		}
		return nil
	})
	return link, err
}

// joinRel joins a display path and a name.
func joinRel(rel, name string) string {
	if rel == "." {
		return name
	}
	if filepath.IsAbs(rel) {
		return filepath.Join(rel, name)
	}
	return rel + "/" + name
}

// WriteFileAtomic writes data to the file at p (any path ResolveForWrite
// accepts) so that readers see either the old or the new contents: it
// writes a temporary file in the same directory, syncs it and renames it
// over the target. An existing file keeps its permission bits; a new one
// gets perm (less the umask), and missing parent directories are created
// with 0755. A symlink at p is followed, so its target is what changes.
// created reports whether the file did not exist before.
func (w *Workspace) WriteFileAtomic(p string, data []byte, perm fs.FileMode) (created bool, err error) {
	t, err := w.resolveForWrite(p)
	if err != nil {
		return false, err
	}
	if t.sub == "." {
		return false, pathError("write", t.rel, errors.New("is a directory"))
	}
	r, err := openRoot(t)
	if err != nil {
		return false, err
	}
	defer r.Close()

	dir := filepath.Dir(t.sub)
	mode := perm.Perm()
	fi, err := r.Stat(t.sub)
	switch {
	case err == nil:
		if fi.IsDir() {
			return false, pathError("write", t.rel, errors.New("is a directory"))
		}
		if !fi.Mode().IsRegular() {
			return false, pathError("write", t.rel, errors.New("not a regular file"))
		}
		mode = fi.Mode().Perm()
	case errors.Is(err, fs.ErrNotExist):
		created = true
		if dir != "." {
			if err := r.MkdirAll(dir, 0o755); err != nil {
				return false, pathError("create directory", joinRelDir(t, dir), err)
			}
		}
	default:
		return false, pathError("stat", t.rel, err)
	}

	tmp, err := writeTemp(r, dir, filepath.Base(t.sub), data, mode, !created, func(tmp string) {
		w.temps.record(filepath.Join(t.base, tmp))
	})
	if err != nil {
		return false, pathError("write", t.rel, err)
	}
	if err := r.Rename(tmp, t.sub); err != nil {
		_ = r.Remove(tmp)
		return false, pathError("write", t.rel, err)
	}
	return created, nil
}

// joinRelDir is the display form of directory dir (relative to t.base).
func joinRelDir(t target, dir string) string {
	if !filepath.IsAbs(t.rel) {
		return filepath.ToSlash(dir)
	}
	return filepath.Join(t.base, dir)
}

// writeTemp writes data to a new hidden temporary file next to name in dir
// and returns its path relative to r. With exact set the file's mode is
// set to mode regardless of the umask (to keep an existing file's mode).
// Before it creates the file it tells record the file's path.
func writeTemp(r *os.Root, dir, name string, data []byte, mode fs.FileMode, exact bool, record func(tmp string)) (string, error) {
	var (
		tmp string
		f   *os.File
		err error
	)
	for range 10 {
		tmp = filepath.Join(dir, "."+name+".tmp-"+strconv.FormatUint(rand.Uint64(), 36))
		record(tmp)
		f, err = r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return "", fmt.Errorf("create temporary file: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			_ = f.Close()
			_ = r.Remove(tmp)
		}
	}()
	if exact {
		if err := f.Chmod(mode); err != nil {
			return "", err
		}
	}
	if _, err := f.Write(data); err != nil {
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	ok = true
	return tmp, nil
}
