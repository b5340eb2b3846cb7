package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// protectedPaths are the paths inside the workspace that stay read-only in
// every mode, and cannot be created when absent: git's configuration and
// hooks (which run code on the user's next git command), submodule URLs,
// and mx-claw's, MCP's and Claude Code's project settings (which grant
// permissions and start programs).
var protectedPaths = []string{".git/config", ".git/hooks", ".gitmodules", ".mx-claw", ".mcp.json", ".claude"}

// dirLike are the protected paths that are directories: an absent one is
// masked by an empty read-only directory, the others by an empty file, so
// that git's discovery skips a masked .git as it skips any invalid one.
var dirLike = map[string]bool{".git": true, ".git/hooks": true, ".mx-claw": true, ".claude": true}

// ProtectedPaths returns the protected paths, relative to the workspace.
func ProtectedPaths() []string { return slices.Clone(protectedPaths) }

// Policy is what one command's sandbox enforces.
type Policy struct {
	Config
	// Workspace is the canonical workspace root.
	Workspace string
	// TmpDir is the session's temp dir (TMPDIR), always writable.
	TmpDir string
}

// WritableRoots returns the directories a command may write, canonical
// and existing: the workspace (unless read-only), the temp dir and the
// configured writable roots (unless read-only).
func (p Policy) writableRoots() []string {
	var roots []string
	add := func(d string) {
		if d == "" {
			return
		}
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			return
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			return
		}
		if !slices.Contains(roots, real) {
			roots = append(roots, real)
		}
	}
	if p.Mode != ModeReadOnly {
		add(p.Workspace)
	}
	add(p.TmpDir)
	if p.Mode != ModeReadOnly {
		for _, r := range p.WritableRoots {
			add(r)
		}
	}
	return roots
}

// Plan is a policy laid onto the file system as it is now: what must be
// writable and which paths below the writable roots stay read-only.
type Plan struct {
	// Writable are the writable roots (canonical, existing).
	Writable []string
	// ReadOnly are existing protected paths (and the targets of protected
	// symlinks) inside a writable root.
	ReadOnly []string
	// Masks are the first missing components of absent protected paths
	// inside a writable root; MaskDirs says which are directories.
	Masks    []string
	MaskDirs map[string]bool
	// Pinned are symlinks on the way to a protected path: the directories
	// holding them stay read-only so the link cannot be replaced.
	Pinned []string
}

// Plan lays the policy onto the file system.
func (p Policy) Plan() Plan {
	pl := &planner{plan: Plan{Writable: p.writableRoots(), MaskDirs: map[string]bool{}}}
	if p.Mode == ModeWorkspaceWrite && p.Workspace != "" {
		ws, err := filepath.EvalSymlinks(p.Workspace)
		if err == nil {
			for _, rel := range protectedPaths {
				pl.protect(filepath.Join(ws, filepath.FromSlash(rel)), dirLike[rel], 0)
			}
			// An absent .git is masked by an empty directory only inside
			// another repository, where git looks past it to the parent;
			// elsewhere by an empty file, which Go's VCS stamping ignores
			// (it would run git on an empty directory and fail the build).
			dotGit := filepath.Join(ws, ".git")
			if _, masked := pl.plan.MaskDirs[dotGit]; masked {
				pl.plan.MaskDirs[dotGit] = insideRepository(filepath.Dir(ws))
			}
		}
	}
	return pl.plan
}

type planner struct {
	plan Plan
}

// rootOf returns the writable root p lies in, or "".
func (pl *planner) rootOf(p string) string {
	best := ""
	for _, r := range pl.plan.Writable {
		if within(r, p) && len(r) > len(best) {
			best = r
		}
	}
	return best
}

// protect makes the protected path p read-only, or uncreatable when
// absent, following symlinks on its way (at most a few).
func (pl *planner) protect(p string, isDir bool, depth int) {
	root := pl.rootOf(p)
	if root == "" || depth > 8 {
		return // outside every writable root: read-only anyway
	}
	if p == root {
		pl.add(&pl.plan.ReadOnly, p)
		return
	}
	parts := strings.Split(p[len(root)+1:], string(filepath.Separator))
	cur := root
	for i, part := range parts {
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				pl.add(&pl.plan.Masks, next)
				// A missing intermediate directory is a directory.
				pl.plan.MaskDirs[next] = i < len(parts)-1 || isDir
			}
			return
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			pl.add(&pl.plan.Pinned, next)
			target, err := os.Readlink(next)
			if err != nil {
				return
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(cur, target)
			}
			pl.protect(filepath.Join(append([]string{filepath.Clean(target)}, parts[i+1:]...)...), isDir, depth+1)
			return
		}
		if i == len(parts)-1 || !fi.IsDir() {
			// The path itself, or a file where a directory was expected
			// (a worktree's .git file): keep it as it is.
			pl.add(&pl.plan.ReadOnly, next)
			return
		}
		cur = next
	}
}

func (pl *planner) add(list *[]string, p string) {
	if !slices.Contains(*list, p) {
		*list = append(*list, p)
	}
}

// within reports whether p is dir or below it.
func within(dir, p string) bool {
	if dir == p {
		return true
	}
	if dir == string(filepath.Separator) {
		return strings.HasPrefix(p, dir)
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}

// sensitive returns every path of the plan that must not be granted
// write access: read-only paths, masks and pinned symlinks.
func (pl Plan) sensitive() []string {
	var out []string
	out = append(out, pl.ReadOnly...)
	out = append(out, pl.Masks...)
	return append(out, pl.Pinned...)
}

// PinnedDirs returns the directories that stay read-only because they hold
// a pinned symlink.
func (pl Plan) pinnedDirs() []string {
	var out []string
	for _, p := range pl.Pinned {
		d := filepath.Dir(p)
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// insideRepository reports whether dir or one of its parents holds a .git.
func insideRepository(dir string) bool {
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}
