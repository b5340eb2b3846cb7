package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Tree is a worktree a subagent works in.
type Tree struct {
	// Repo is the top folder of the user's repository.
	Repo string
	// Dir is the worktree's folder.
	Dir string
	// Branch is the branch it is on.
	Branch string
	// Base is the commit it started from.
	Base string
}

// Create adds a worktree of repo in dir (which must not exist) on a new
// branch, from the commit HEAD is at.
func Create(ctx context.Context, repo, dir, branch string) (*Tree, error) {
	if !strings.HasPrefix(branch, BranchPrefix) {
		return nil, fmt.Errorf("branch %q: a subagent's branch starts with %s", branch, BranchPrefix)
	}
	if _, err := os.Lstat(dir); err == nil {
		return nil, fmt.Errorf("worktree folder %s exists already", dir)
	}
	base, err := git(ctx, repo, nil, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		return nil, errors.New("the repository has no commit yet: a worktree starts from one")
	}
	base = strings.TrimSpace(base)
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return nil, err
	}
	if _, err := git(ctx, repo, nil, "worktree", "add", "--quiet", "-b", branch, dir, base); err != nil {
		return nil, fmt.Errorf("create worktree: %w", err)
	}
	return &Tree{Repo: repo, Dir: dir, Branch: branch, Base: base}, nil
}

// Result is what a subagent's work in a worktree came to.
type Result struct {
	Branch string
	Base   string
	// Commit is the branch's commit with the subagent's changes; empty
	// when it changed nothing (and the branch was deleted).
	Commit string
	// Stat is `git diff --stat` of the changes.
	Stat string
	// Files are the changed paths, relative to the repository.
	Files []string
}

// Changed reports whether the subagent changed anything.
func (r *Result) Changed() bool { return r.Commit != "" }

// Finish commits everything changed in the worktree onto its branch with
// message, removes the worktree folder and returns the result. A branch
// with no changes is deleted. It uses ctx only for the commit; the clean-up
// runs even when ctx is done.
func (t *Tree) Finish(ctx context.Context, message string) (*Result, error) {
	res := &Result{Branch: t.Branch, Base: t.Base}
	commitErr := t.commit(ctx, message)
	bg := context.WithoutCancel(ctx)
	if commitErr == nil {
		head, err := git(bg, t.Repo, nil, "rev-parse", "refs/heads/"+t.Branch)
		if err == nil && strings.TrimSpace(head) != t.Base {
			res.Commit = strings.TrimSpace(head)
			res.Stat, _ = git(bg, t.Repo, nil, "diff", "--stat=100", t.Base, res.Commit)
			names, _ := git(bg, t.Repo, nil, "diff", "--name-only", "--no-renames", t.Base, res.Commit)
			res.Files = strings.Fields(names)
		}
	}
	_, rmErr := git(bg, t.Repo, nil, "worktree", "remove", "--force", t.Dir)
	if rmErr != nil {
		// A folder git no longer knows: remove it, then forget it.
		_ = os.RemoveAll(t.Dir)
		_, _ = git(bg, t.Repo, nil, "worktree", "prune")
	}
	if res.Commit == "" && commitErr == nil {
		_, _ = git(bg, t.Repo, nil, "branch", "-D", t.Branch)
	}
	if commitErr != nil {
		return res, fmt.Errorf("commit the subagent's changes on %s: %w", t.Branch, commitErr)
	}
	return res, nil
}

// commit stages everything in the worktree and commits it, if anything
// changed.
func (t *Tree) commit(ctx context.Context, message string) error {
	if _, err := git(ctx, t.Dir, nil, "add", "--all"); err != nil {
		return err
	}
	if _, err := git(ctx, t.Dir, nil, "diff", "--cached", "--quiet"); err == nil {
		return nil // nothing changed
	}
	_, err := git(ctx, t.Dir, nil, "-c", "user.name=mx-claw", "-c", "user.email=mx-claw@localhost",
		"-c", "commit.gpgsign=false", "commit", "--quiet", "--no-verify", "-m", message)
	return err
}

// Open returns the Tree of an existing worktree folder, for finishing the
// work of a subagent whose process died: Base is the branch's commit as
// it is now, so Finish commits only what was left uncommitted.
func Open(ctx context.Context, dir string) (*Tree, error) {
	common, err := git(ctx, dir, nil, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, ErrNotRepo)
	}
	branch, err := git(ctx, dir, nil, "symbolic-ref", "--short", "HEAD")
	if err != nil || !strings.HasPrefix(strings.TrimSpace(branch), BranchPrefix) {
		return nil, fmt.Errorf("%s is not on a subagent's branch", dir)
	}
	head, err := git(ctx, dir, nil, "rev-parse", "HEAD")
	if err != nil {
		return nil, err
	}
	return &Tree{Repo: filepath.Dir(strings.TrimSpace(common)), Dir: dir, Branch: strings.TrimSpace(branch),
		Base: strings.TrimSpace(head)}, nil
}
