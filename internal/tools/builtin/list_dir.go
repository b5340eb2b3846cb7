package builtin

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/mx-claw/mx-claw/internal/ignore"
	"github.com/mx-claw/mx-claw/internal/tools"
)

//go:embed list_dir.md
var listDirDescription string

const listDirSchema = `{
  "type": "object",
  "properties": {
    "path": {
      "type": "string",
      "description": "The directory to list, relative to the workspace root (or absolute inside it). Default \".\"."
    },
    "depth": {
      "type": "integer",
      "minimum": 1,
      "maximum": 5,
      "description": "How many levels to show. Default 2."
    }
  },
  "additionalProperties": false
}`

// Defaults of list_dir.
const (
	listDefaultDepth = 2
	listMaxEntries   = 1000
)

// listDir is the list_dir tool. maxEntries is settable in tests.
type listDir struct {
	maxEntries int
}

func newListDir() *listDir { return &listDir{maxEntries: listMaxEntries} }

type listDirArgs struct {
	Path  *string  `json:"path"`
	Depth *jsonInt `json:"depth"`
}

func (a listDirArgs) path() string {
	return pathOrDot(a.Path)
}

// listDirInfo is what list_dir is to the agent; Info returns it, shared.
var listDirInfo = tools.Info{Name: "list_dir", Description: listDirDescription, Schema: json.RawMessage(listDirSchema),
	Risk: tools.RiskRead, ConcurrencySafe: true}

func (*listDir) Info() tools.Info { return listDirInfo }
func (*listDir) Summary(args json.RawMessage) string {
	var a listDirArgs
	if decodeArgs(args, &a) != nil {
		return "List directory"
	}
	return "List " + displayPath(a.path())
}

// dirNode is one entry of the tree being listed.
type dirNode struct {
	name     string
	path     string // display path, see Workspace.Resolve
	abs      string
	depth    int // 0 for the listed directory
	isDir    bool
	size     int64
	link     string // symlink target, if a symlink
	children []*dirNode
	count    int    // entries of a directory at the depth limit
	readErr  string // why the directory could not be read
	read     bool
}

func (t *listDir) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	ws, err := workspace(env)
	if err != nil {
		return tools.Result{}, err
	}
	var a listDirArgs
	if err := decodeArgs(args, &a); err != nil {
		return tools.Result{}, err
	}
	depth := listDefaultDepth
	if a.Depth != nil {
		depth = min(max(int(*a.Depth), 1), 5)
	}
	abs, rel, err := ws.Resolve(a.path())
	if err != nil {
		return tools.Result{}, err
	}
	fi, err := ws.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return tools.Result{}, fmt.Errorf("directory not found: %s", rel)
	case err != nil:
		return tools.Result{}, err
	case !fi.IsDir():
		return tools.Result{}, fmt.Errorf("%s is a file, not a directory; use read_file to read it", rel)
	}

	// .gitignore files (the root's, nested ones, .git/info/exclude) apply
	// only to paths inside the root.
	var ign *ignore.Matcher
	if !filepath.IsAbs(rel) {
		ign = ignore.New(ws.Root())
	}

	w := walker{ws: ws, ign: ign, maxDepth: depth, maxEntries: t.maxEntries, hide: env.IsHidden}
	top := &dirNode{name: rel, path: rel, abs: abs, isDir: true}
	if err := w.walk(ctx, top); err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Content: w.render(top)}, nil
}

// walker lists a tree breadth first, so when the entry cap is hit the
// upper levels are complete.
type walker struct {
	ws         *tools.Workspace
	ign        *ignore.Matcher
	maxDepth   int
	maxEntries int

	shown       int
	omitted     int  // entries left out because of the cap
	omittedDirs bool // some left out were directories, whose contents were not counted
	ignored     int  // entries skipped by .gitignore
	skippedGit  bool
	// hide reports entries a deny rule or a secret store covers, which
	// are left out (and counted in hidden).
	hide   func(abs string) bool
	hidden int
}

func (w *walker) walk(ctx context.Context, top *dirNode) error {
	queue := []*dirNode{top}
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := queue[0]
		queue = queue[1:]
		entries, err := w.ws.ReadDir(n.abs)
		if err != nil {
			n.readErr = errorReason(err)
			continue
		}
		n.read = true
		for _, e := range entries {
			name := e.Name()
			if name == ".git" {
				w.skippedGit = true
				continue
			}
			child := &dirNode{
				name:  name,
				path:  joinDisplay(n.path, name),
				abs:   filepath.Join(n.abs, name),
				depth: n.depth + 1,
				isDir: e.IsDir(),
			}
			if w.hide != nil && w.hide(child.abs) {
				w.hidden++
				continue
			}
			if w.ign != nil && w.ign.Match(child.path, child.isDir) {
				w.ignored++
				continue
			}
			if n.depth >= w.maxDepth {
				n.count++
				continue
			}
			if w.shown >= w.maxEntries {
				w.omitted++
				w.omittedDirs = w.omittedDirs || child.isDir
				continue
			}
			w.shown++
			switch {
			case e.Type()&fs.ModeSymlink != 0:
				child.link, _ = w.ws.Readlink(child.abs)
				if child.link == "" {
					child.link = "?"
				}
			case child.isDir:
				queue = append(queue, child)
			default:
				if info, err := e.Info(); err == nil {
					child.size = info.Size()
				}
			}
			n.children = append(n.children, child)
		}
	}
	return nil
}

// render prints the tree and the notes on what was left out.
func (w *walker) render(top *dirNode) string {
	var sb strings.Builder
	head := top.path
	if head == "." {
		head = "./"
	} else if !strings.HasSuffix(head, "/") {
		head += "/"
	}
	sb.WriteString(head)
	if top.read && len(top.children) == 0 && w.ignored == 0 && w.hidden == 0 && !w.skippedGit {
		sb.WriteString(" (empty)")
	}
	sb.WriteByte('\n')
	var print func(n *dirNode)
	print = func(n *dirNode) {
		for _, c := range n.children {
			sb.WriteString(strings.Repeat("  ", c.depth))
			sb.WriteString(c.name)
			switch {
			case c.link != "":
				fmt.Fprintf(&sb, " -> %s", c.link)
			case c.isDir:
				sb.WriteByte('/')
				switch {
				case c.readErr != "":
					fmt.Fprintf(&sb, " (unreadable: %s)", c.readErr)
				case c.depth >= w.maxDepth && c.count > 0:
					fmt.Fprintf(&sb, " (%d %s)", c.count, plural(c.count, "entry", "entries"))
				case c.read && len(c.children) == 0 && c.count == 0:
					sb.WriteString(" (empty)")
				}
			default:
				fmt.Fprintf(&sb, " (%s)", humanSize(c.size))
			}
			sb.WriteByte('\n')
			print(c)
		}
	}
	print(top)

	if w.omitted > 0 {
		atLeast := ""
		if w.omittedDirs {
			atLeast = "at least "
		}
		fmt.Fprintf(&sb, "[… %s%d more %s not shown (the listing is capped at %d). "+
			"List a subdirectory, or use a smaller depth.]\n",
			atLeast, w.omitted, plural(w.omitted, "entry", "entries"), w.maxEntries)
	}
	var skipped []string
	if w.skippedGit {
		skipped = append(skipped, ".git")
	}
	if w.ignored > 0 {
		skipped = append(skipped, fmt.Sprintf("%d %s matched by .gitignore",
			w.ignored, plural(w.ignored, "entry", "entries")))
	}
	if w.hidden > 0 {
		skipped = append(skipped, fmt.Sprintf("%d %s that deny rules or secret stores cover",
			w.hidden, plural(w.hidden, "entry", "entries")))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&sb, "[Skipped %s.]\n", strings.Join(skipped, " and "))
	}
	return sb.String()
}

// errorReason is the cause of a file system error without its path.
func errorReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// plural picks the singular or plural form for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
