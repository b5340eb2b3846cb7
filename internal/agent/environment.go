package agent

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// gitTimeout bounds the git status taken when a session starts: a huge or
// slow repository must not hold up the first request for long.
const gitTimeout = 3 * time.Second

// maxGitChanges caps the status lines a system prompt shows.
const maxGitChanges = 15

// maxGitLine caps one status line (a very long path).
const maxGitLine = 200

// GitState is the git repository holding a workspace, as a session saw it
// at its start.
type GitState struct {
	// Root is the repository's top directory.
	Root string
	// Branch is the current branch; empty when HEAD is detached.
	Branch string
	// Head is the short commit id of a detached HEAD.
	Head string
	// NoCommits says the branch has no commits yet.
	NoCommits bool
	// Upstream is the branch's upstream ("origin/main"), with how far
	// the branch is ahead of and behind it.
	Upstream      string
	Ahead, Behind int
	// Changes are the first status lines ("XY path", paths relative to
	// Root); Count is how many there are in all.
	Changes []string
	Count   int
	// Error says why the status is unknown, if it is.
	Error string
}

// More returns how many status lines Changes leaves out.
func (g *GitState) More() int { return g.Count - len(g.Changes) }

// Describe returns the sentence about the repository and its branch, seen
// from the workspace.
func (g *GitState) Describe(workspace string) string {
	var b strings.Builder
	b.WriteString("a repository")
	if g.Root != workspace {
		b.WriteString(" at " + g.Root)
		if rel, err := filepath.Rel(g.Root, workspace); err == nil {
			b.WriteString(" (the workspace is its subdirectory " + filepath.ToSlash(rel) + "; status paths are relative to the repository)")
		}
	}
	switch {
	case g.Branch == "" && g.Head != "":
		b.WriteString(", detached HEAD at " + g.Head)
	case g.Branch == "":
		b.WriteString(", detached HEAD")
	default:
		b.WriteString(", on branch " + g.Branch)
	}
	if g.NoCommits {
		b.WriteString(" (no commits yet)")
	}
	if g.Upstream != "" {
		b.WriteString(", tracking " + g.Upstream)
		var ab []string
		if g.Ahead > 0 {
			ab = append(ab, strconv.Itoa(g.Ahead)+" ahead")
		}
		if g.Behind > 0 {
			ab = append(ab, strconv.Itoa(g.Behind)+" behind")
		}
		if len(ab) > 0 {
			b.WriteString(" (" + strings.Join(ab, ", ") + ")")
		}
	}
	b.WriteString(".")
	return b.String()
}

// systemName names the OS and architecture, with the distribution's name
// on Linux (so the model knows apt from dnf).
func systemName() string {
	s := runtime.GOOS + "/" + runtime.GOARCH
	switch runtime.GOOS {
	case "linux":
		if name := osRelease("/etc/os-release"); name != "" {
			s += " (" + name + ")"
		}
	case "darwin":
		s += " (macOS)"
	}
	return s
}

// osRelease returns PRETTY_NAME of an os-release file, or "".
func osRelease(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "PRETTY_NAME="); ok {
			if u, err := strconv.Unquote(v); err == nil {
				v = u
			}
			return strings.TrimSpace(strings.Trim(v, `'`))
		}
	}
	return ""
}

// gitRoot returns the nearest directory at or above dir that holds a .git
// (a directory, or a file pointing at one, as in worktrees).
func gitRoot(dir string) (string, bool) {
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// probeGit describes the repository holding dir; nil if there is none.
// It runs one `git status` (two when HEAD is detached), bounded by
// gitTimeout, that takes no optional locks, so a session starting never
// disturbs the user's own git commands. core.fsmonitor is turned off: a
// repository's config must not start a program just because a session
// started in it.
func probeGit(ctx context.Context, dir string) *GitState {
	root, ok := gitRoot(dir)
	if !ok {
		return nil
	}
	g := &GitState{Root: root}
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	out, err := runGit(ctx, dir, "status", "--porcelain=v1", "--branch", "--untracked-files=normal")
	switch {
	case errors.Is(err, exec.ErrNotFound):
		g.Error = "git is not installed"
		return g
	case ctx.Err() != nil:
		g.Error = "git status took longer than " + gitTimeout.String()
		return g
	case err != nil:
		g.Error = "git status failed"
		return g
	}
	g.parseStatus(out)
	if g.Branch == "" && !g.NoCommits {
		if head, err := runGit(ctx, dir, "rev-parse", "--short", "HEAD"); err == nil {
			g.Head = strings.TrimSpace(string(head))
		}
	}
	return g
}

// startGitProbe runs probeGit in the background and returns a function
// that waits for its result. The probe ends on its own (gitTimeout) if
// nobody waits.
func startGitProbe(ctx context.Context, dir string) func() *GitState {
	ch := make(chan *GitState, 1)
	go func() { ch <- probeGit(ctx, dir) }()
	return sync.OnceValue(func() *GitState { return <-ch })
}

// runGit runs git with args in dir and returns its standard output.
func runGit(ctx context.Context, dir string, args ...string) ([]byte, error) {
	args = append([]string{"-c", "core.fsmonitor=false", "--no-optional-locks"}, args...)
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0")
	cmd.WaitDelay = time.Second
	return cmd.Output()
}

// parseStatus reads the output of `git status --porcelain=v1 --branch`.
func (g *GitState) parseStatus(out []byte) {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	for _, l := range lines {
		if l == "" {
			continue
		}
		if h, ok := strings.CutPrefix(l, "## "); ok {
			g.parseBranch(h)
			continue
		}
		g.Count++
		if len(g.Changes) < maxGitChanges {
			if len(l) > maxGitLine {
				n := maxGitLine
				for n > 0 && !utf8.RuneStart(l[n]) {
					n--
				}
				l = l[:n] + "…"
			}
			g.Changes = append(g.Changes, l)
		}
	}
}

// parseBranch reads the "## " header: "main", "main...origin/main [ahead
// 1, behind 2]", "No commits yet on main", "HEAD (no branch)".
func (g *GitState) parseBranch(h string) {
	if b, ok := strings.CutPrefix(h, "No commits yet on "); ok {
		g.Branch, g.NoCommits = b, true
		return
	}
	if strings.HasPrefix(h, "HEAD (no branch)") {
		return
	}
	h, track, _ := strings.Cut(h, " [")
	branch, upstream, _ := strings.Cut(h, "...")
	g.Branch, g.Upstream = branch, upstream
	for _, part := range strings.Split(strings.TrimSuffix(track, "]"), ", ") {
		if n, ok := strings.CutPrefix(part, "ahead "); ok {
			g.Ahead, _ = strconv.Atoi(n)
		}
		if n, ok := strings.CutPrefix(part, "behind "); ok {
			g.Behind, _ = strconv.Atoi(n)
		}
	}
}
