package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// ErrNotRepo is returned for a folder that is not inside a git repository.
var ErrNotRepo = errors.New("not inside a git repository")

// BranchPrefix starts the name of every branch a subagent works on; only
// such branches are merged by Merge.
const BranchPrefix = "mx-claw/"

// git runs git in dir with args and returns its standard output; its
// error carries the first lines of standard error.
func git(ctx context.Context, dir string, stdin io.Reader, args ...string) (string, error) {
	args = append([]string{"-c", "core.fsmonitor=false", "-c", "core.hooksPath=" + os.DevNull}, args...)
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Stdin = stdin
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
	cmd.WaitDelay = time.Second
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", errors.New("git is not installed")
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return out.String(), &GitError{Args: args[4:], Stderr: msg, err: err}
	}
	return out.String(), nil
}

// GitError is a git command that failed.
type GitError struct {
	Args   []string
	Stderr string
	err    error
}

func (e *GitError) Error() string {
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), firstLines(e.Stderr, 6))
}

func (e *GitError) Unwrap() error { return e.err }

// RepoRoot returns the top folder of the repository holding dir, with
// symbolic links resolved, or an error matching ErrNotRepo.
func RepoRoot(ctx context.Context, dir string) (string, error) {
	out, err := git(ctx, dir, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		var ge *GitError
		if errors.As(err, &ge) {
			return "", fmt.Errorf("%s: %w", dir, ErrNotRepo)
		}
		return "", err
	}
	root := strings.TrimSpace(out)
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	return root, nil
}

// firstLines returns at most n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}
