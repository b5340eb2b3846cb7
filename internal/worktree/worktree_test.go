package worktree

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// newRepo makes a repository with one commit of a.txt and b.txt.
func newRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	run(t, dir, "init", "-q", "-b", "main")
	write(t, filepath.Join(dir, "a.txt"), "one\ntwo\nthree\n")
	write(t, filepath.Join(dir, "b.txt"), "bee\n")
	run(t, dir, "add", "-A")
	run(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
	return dir
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// work makes a worktree, lets change edit it and finishes it.
func work(t *testing.T, repo, branch string, change func(dir string)) *Result {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "wt")
	tree, err := Create(ctx, repo, dir, branch)
	if err != nil {
		t.Fatal(err)
	}
	change(dir)
	res, err := tree.Finish(ctx, "subagent work")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the worktree folder is still there: %v", err)
	}
	return res
}

func TestBranchHoldsTheWorkAndTheTreeIsUntouched(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	res := work(t, repo, "mx-claw/general-1", func(dir string) {
		write(t, filepath.Join(dir, "a.txt"), "one\nTWO\nthree\n")
		write(t, filepath.Join(dir, "new.txt"), "new\n")
	})
	if !res.Changed() || !slices.Equal(res.Files, []string{"a.txt", "new.txt"}) || !strings.Contains(res.Stat, "2 files changed") {
		t.Fatalf("result %+v", res)
	}
	if got := run(t, repo, "show", "mx-claw/general-1:a.txt"); got != "one\nTWO\nthree\n" {
		t.Errorf("branch holds %q", got)
	}
	if got := read(t, filepath.Join(repo, "a.txt")); got != "one\ntwo\nthree\n" {
		t.Errorf("the user's tree changed: %q", got)
	}
	if st := run(t, repo, "status", "--porcelain"); st != "" {
		t.Errorf("the user's tree is not clean: %q", st)
	}
	if wl := run(t, repo, "worktree", "list"); strings.Count(wl, "\n") != 1 {
		t.Errorf("worktrees left: %s", wl)
	}
}

func TestNoChangeLeavesNoBranch(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	res := work(t, repo, "mx-claw/general-2", func(string) {})
	if res.Changed() {
		t.Errorf("result %+v", res)
	}
	if b := run(t, repo, "branch", "--list", "mx-claw/*"); b != "" {
		t.Errorf("branches left: %q", b)
	}
}

func TestMergeAppliesBesideUncommittedChanges(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	work(t, repo, "mx-claw/general-3", func(dir string) {
		write(t, filepath.Join(dir, "a.txt"), "one\ntwo\nthree\nfour\n")
		write(t, filepath.Join(dir, "new.txt"), "new\n")
	})
	// The user's own uncommitted change elsewhere stays.
	write(t, filepath.Join(repo, "b.txt"), "bee mine\n")
	res, err := Merge(context.Background(), repo, "mx-claw/general-3")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Files, []string{"a.txt", "new.txt"}) {
		t.Errorf("files %v", res.Files)
	}
	if got := read(t, filepath.Join(repo, "a.txt")); got != "one\ntwo\nthree\nfour\n" {
		t.Errorf("a.txt %q", got)
	}
	if got := read(t, filepath.Join(repo, "b.txt")); got != "bee mine\n" {
		t.Errorf("the user's change was lost: %q", got)
	}
	if got := read(t, filepath.Join(repo, "new.txt")); got != "new\n" {
		t.Errorf("new.txt %q", got)
	}
}

func TestMergeRefusesAConflictWithUncommittedChanges(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	work(t, repo, "mx-claw/general-4", func(dir string) {
		write(t, filepath.Join(dir, "a.txt"), "one\nSUBAGENT\nthree\n")
		write(t, filepath.Join(dir, "new.txt"), "new\n")
	})
	write(t, filepath.Join(repo, "a.txt"), "one\nUSER\nthree\n")
	_, err := Merge(context.Background(), repo, "mx-claw/general-4")
	var conflict *ConflictError
	if !errors.As(err, &conflict) || !strings.Contains(err.Error(), "a.txt") {
		t.Fatalf("Merge = %v, want a conflict naming a.txt", err)
	}
	if got := read(t, filepath.Join(repo, "a.txt")); got != "one\nUSER\nthree\n" {
		t.Errorf("the user's change was touched: %q", got)
	}
	if _, err := os.Stat(filepath.Join(repo, "new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("part of the branch was applied: %v", err)
	}
}

func TestMergeRefusesProtectedPathsLinksAndOtherBranches(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	work(t, repo, "mx-claw/general-5", func(dir string) {
		write(t, filepath.Join(dir, ".claude", "settings.json"), `{"permissions":{"allow":["run_command"]}}`)
	})
	work(t, repo, "mx-claw/general-6", func(dir string) {
		if err := os.Symlink("/etc/passwd", filepath.Join(dir, "link")); err != nil {
			t.Fatal(err)
		}
	})
	ctx := context.Background()
	var refused *RefusedError
	if _, err := Merge(ctx, repo, "mx-claw/general-5"); !errors.As(err, &refused) || refused.Path != ".claude/settings.json" {
		t.Errorf("protected path: %v", err)
	}
	if _, err := Merge(ctx, repo, "mx-claw/general-6"); !errors.As(err, &refused) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("link: %v", err)
	}
	if _, err := Merge(ctx, repo, "main"); err == nil {
		t.Error("merged a branch that is not a subagent's")
	}
	if _, err := Merge(ctx, repo, "mx-claw/none"); err == nil || !strings.Contains(err.Error(), "no branch") {
		t.Errorf("missing branch: %v", err)
	}
	if st := run(t, repo, "status", "--porcelain"); st != "" {
		t.Errorf("the tree changed: %q", st)
	}
}

func TestCreateRefusesWithoutCommitsOrRepo(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ctx := context.Background()
	empty := t.TempDir()
	run(t, empty, "init", "-q")
	if _, err := Create(ctx, empty, filepath.Join(t.TempDir(), "wt"), "mx-claw/x"); err == nil || !strings.Contains(err.Error(), "no commit") {
		t.Errorf("Create in an empty repository: %v", err)
	}
	if _, err := RepoRoot(ctx, t.TempDir()); !errors.Is(err, ErrNotRepo) {
		t.Errorf("RepoRoot outside a repository: %v", err)
	}
}

func TestOpenFinishesALeftOverWorktree(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "wt")
	if _, err := Create(ctx, repo, dir, "mx-claw/general-7"); err != nil {
		t.Fatal(err)
	}
	// The process died here, with work not committed.
	write(t, filepath.Join(dir, "left.txt"), "left\n")
	tree, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tree.Finish(ctx, "recovered")
	if err != nil || !res.Changed() || tree.Repo != repo {
		t.Fatalf("Finish = %+v, %v (repo %s)", res, err, tree.Repo)
	}
	if got := run(t, repo, "show", "mx-claw/general-7:left.txt"); got != "left\n" {
		t.Errorf("branch holds %q", got)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("folder left: %v", err)
	}
}
