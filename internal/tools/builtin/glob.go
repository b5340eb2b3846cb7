package builtin

import (
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/mx-claw/mx-claw/internal/ignore"
	"github.com/mx-claw/mx-claw/internal/tools"
)

//go:embed glob.md
var globDescription string

const globSchema = `{
  "type": "object",
  "properties": {
    "pattern": {
      "type": "string",
      "minLength": 1,
      "description": "The glob to match file paths against, relative to path: ** for any number of directories, * and ? within a name, [abc] classes, {a,b} alternatives. Example: \"**/*.go\"."
    },
    "path": {
      "type": "string",
      "description": "The directory to search in, relative to the workspace root (or absolute inside it). Default \".\"."
    }
  },
  "required": ["pattern"],
  "additionalProperties": false
}`

// globMaxResults is how many paths glob shows.
const globMaxResults = 200

// glob is the glob tool. maxResults is settable in tests.
type glob struct {
	maxResults int
}

func newGlob() *glob { return &glob{maxResults: globMaxResults} }

type globArgs struct {
	Pattern string  `json:"pattern"`
	Path    *string `json:"path"`
}

func (a globArgs) path() string {
	return pathOrDot(a.Path)
}

// globInfo is what glob is to the agent; Info returns it, shared.
var globInfo = tools.Info{Name: "glob", Description: globDescription, Schema: json.RawMessage(globSchema),
	Risk: tools.RiskRead, ConcurrencySafe: true}

func (*glob) Info() tools.Info { return globInfo }
func (*glob) Summary(args json.RawMessage) string {
	var a globArgs
	if decodeArgs(args, &a) != nil {
		return "Glob"
	}
	s := "Glob " + a.Pattern
	if p := displayPath(a.path()); p != "." {
		s += " in " + p
	}
	return s
}

// globMatch is a file that matches.
type globMatch struct {
	path  string // display path
	mtime time.Time
}

func (t *glob) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	ws, err := workspace(env)
	if err != nil {
		return tools.Result{}, err
	}
	var a globArgs
	if err := decodeArgs(args, &a); err != nil {
		return tools.Result{}, err
	}
	pattern, err := cleanGlob(a.Pattern)
	if err != nil {
		return tools.Result{}, err
	}
	dir, err := openSearchDir(ws, a.path(), "glob")
	if err != nil {
		return tools.Result{}, err
	}
	defer dir.close()
	if !dir.isDir {
		return tools.Result{}, fmt.Errorf("%s is a file, not a directory; give glob a directory as path", dir.rel)
	}

	// Walk only below the pattern's literal leading directories.
	start := dir.sub
	if base, _ := doublestar.SplitPattern(pattern); base != "." {
		start = path.Join(dir.sub, base)
		if fi, err := fs.Stat(dir.root.FS(), start); err != nil || !fi.IsDir() {
			return tools.Result{Content: t.noMatches(a.Pattern, pattern, dir.rel)}, nil
		}
	}

	var found []globMatch
	err = ignore.NewFS(dir.walkFS()).Walk(start, func(rel string, d fs.DirEntry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if env.IsHidden(dir.abs(rel)) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !doublestar.MatchUnvalidated(pattern, dir.relToSearch(rel)) {
			return nil
		}
		m := globMatch{path: dir.display(rel)}
		if info, err := d.Info(); err == nil {
			m.mtime = info.ModTime()
		}
		found = append(found, m)
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, ctx.Err()
		}
		return tools.Result{}, fmt.Errorf("glob in %s: %w", dir.rel, unwrapPath(err))
	}
	if len(found) == 0 {
		return tools.Result{Content: t.noMatches(a.Pattern, pattern, dir.rel)}, nil
	}
	slices.SortFunc(found, func(x, y globMatch) int {
		if c := y.mtime.Compare(x.mtime); c != 0 {
			return c
		}
		return cmp.Compare(x.path, y.path)
	})
	var sb strings.Builder
	for _, m := range found[:min(len(found), t.maxResults)] {
		sb.WriteString(m.path)
		sb.WriteByte('\n')
	}
	if n := len(found) - t.maxResults; n > 0 {
		fmt.Fprintf(&sb, "[… and %d more %s; showing the %d most recently modified of %d. "+
			"Narrow the pattern or give a path.]\n", n, plural(n, "file", "files"), t.maxResults, len(found))
	}
	return tools.Result{Content: sb.String()}, nil
}

// noMatches is glob's answer when nothing matches.
func (t *glob) noMatches(given, pattern, rel string) string {
	msg := fmt.Sprintf("No files match `%s` in %s.", given, placeName(rel))
	if !strings.Contains(pattern, "/") {
		msg += fmt.Sprintf(" A pattern without / matches only files directly in %s; use `**/%s` to match at any depth.",
			placeName(rel), pattern)
	}
	return msg + " (Files ignored by .gitignore and .git are not searched.)"
}

// placeName names a searched directory in a message.
func placeName(rel string) string {
	if rel == "." {
		return "the workspace root"
	}
	return rel
}

// cleanGlob checks a glob pattern and drops a leading "./".
func cleanGlob(p string) (string, error) {
	for strings.HasPrefix(p, "./") {
		p = strings.TrimLeft(p[2:], "/")
	}
	switch {
	case p == "" || p == ".":
		return "", errors.New("empty glob pattern; use **/* for every file")
	case strings.HasPrefix(p, "/"):
		return "", fmt.Errorf("glob pattern %q is absolute; give a pattern relative to path "+
			"and the directory to search as path", p)
	case slices.Contains(strings.Split(p, "/"), ".."):
		return "", fmt.Errorf("glob pattern %q contains ..; give the directory to search as path", p)
	case !doublestar.ValidatePattern(p):
		return "", fmt.Errorf("invalid glob pattern %q (check for an unclosed [ or {, or a trailing \\)", p)
	}
	return p, nil
}

// searchDir is a directory (or file) that glob or grep searches, opened
// through an os.Root on the workspace root or allowed directory holding
// it, so a symlink swapped in during the search cannot lead outside.
type searchDir struct {
	root  *os.Root
	base  string // the directory root is open on
	inWS  bool   // base is the workspace root: display paths are relative
	sub   string // the searched path relative to base, slash-separated; "." for base
	rel   string // the searched path for display, see Workspace.Resolve
	isDir bool
}

// openSearchDir resolves p in the workspace and opens it for searching by
// tool (glob or grep), refusing .git and anything that does not exist.
// The caller closes it.
func openSearchDir(ws *tools.Workspace, p, tool string) (*searchDir, error) {
	abs, rel, err := ws.Resolve(p)
	if err != nil {
		return nil, err
	}
	fi, err := ws.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("path not found: %s", rel)
	case err != nil:
		return nil, err
	}
	d := &searchDir{base: ws.Root(), inWS: true, rel: rel, isDir: fi.IsDir()}
	if filepath.IsAbs(rel) {
		d.inWS = false
		for _, a := range ws.Allowed() {
			if abs == a || strings.HasPrefix(abs, a+string(filepath.Separator)) {
				d.base = a
				break
			}
		}
	}
	sub, err := filepath.Rel(d.base, abs)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", rel, err)
	}
	d.sub = filepath.ToSlash(sub)
	for _, c := range strings.Split(d.sub, "/") {
		if strings.EqualFold(c, ".git") {
			return nil, fmt.Errorf("%s is inside .git; %s does not search git's internals", rel, tool)
		}
	}
	if d.root, err = os.OpenRoot(d.base); err != nil {
		return nil, fmt.Errorf("open workspace directory: %w", err)
	}
	return d, nil
}

func (d *searchDir) close() { _ = d.root.Close() }

// walkFS returns the file system to walk d with.
func (d *searchDir) walkFS() fs.FS { return walkFS{root: d.root, base: d.base} }

// display turns a path relative to d.base into a display path.
func (d *searchDir) display(rel string) string {
	if d.inWS {
		return rel
	}
	return filepath.Join(d.base, filepath.FromSlash(rel))
}

// abs turns a path relative to d.base into an absolute one.
func (d *searchDir) abs(rel string) string {
	return filepath.Join(d.base, filepath.FromSlash(rel))
}

// relToSearch turns a path relative to d.base into one relative to the
// searched directory.
func (d *searchDir) relToSearch(rel string) string {
	if d.sub == "." {
		return rel
	}
	return strings.TrimPrefix(rel, d.sub+"/")
}

// walkFS is the file system a search walks: directories are listed by
// path, which is cheaper than through an os.Root (which stats every entry
// of a directory it lists), and files are read through the root. Listing
// by path could, while a directory is being swapped for a symlink, show
// names from outside, never contents; ripgrep opens everything by path.
type walkFS struct {
	root *os.Root
	base string
}

func (w walkFS) Open(name string) (fs.File, error) { return w.root.FS().Open(name) }

func (w walkFS) ReadFile(name string) ([]byte, error) { return fs.ReadFile(w.root.FS(), name) }

// Stat lets a reader check what a name is before opening it (opening a
// named pipe would block).
func (w walkFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(w.root.FS(), name) }

func (w walkFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	f, err := os.OpenFile(filepath.Join(w.base, filepath.FromSlash(name)), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}
