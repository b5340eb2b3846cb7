package worktree

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
)

// MergeResult is what Merge brought into the user's tree.
type MergeResult struct {
	Branch string
	// Files are the paths it changed, relative to the repository.
	Files []string
	// Stat is `git diff --stat` of the changes.
	Stat string
}

// ConflictError is Merge's refusal: the branch's changes do not apply to
// the user's working tree as it is. Nothing was changed.
type ConflictError struct {
	Branch string
	// Detail is what git said, naming the files.
	Detail string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("the changes of %s conflict with the working tree (uncommitted changes, or commits since the branch was made); nothing was merged:\n%s",
		e.Branch, e.Detail)
}

// RefusedError is Merge's refusal of changes mx-claw never brings in.
type RefusedError struct {
	Branch string
	Path   string
	Why    string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s changes %s, which is %s; nothing was merged (look at it with git yourself)", e.Branch, e.Path, e.Why)
}

// protectedNames are files and folders mx-claw never writes in a
// workspace; a branch that changes one is not merged.
var protectedNames = []string{".git", ".gitmodules", ".mx-claw", ".claude", ".mcp.json"}

// Merge applies the changes branch made since it forked from the user's
// history to the working tree of repo, as uncommitted changes. It refuses
// with *ConflictError when they do not apply cleanly, and with
// *RefusedError when they touch protected paths, symbolic links or
// submodules; either way the tree is left as it was.
func Merge(ctx context.Context, repo, branch string) (*MergeResult, error) {
	if !strings.HasPrefix(branch, BranchPrefix) {
		return nil, fmt.Errorf("branch %q is not a subagent's branch (they start with %s)", branch, BranchPrefix)
	}
	ref := "refs/heads/" + branch
	if _, err := git(ctx, repo, nil, "rev-parse", "--verify", "--quiet", ref); err != nil {
		return nil, fmt.Errorf("no branch %s in %s", branch, repo)
	}
	base, err := git(ctx, repo, nil, "merge-base", "HEAD", ref)
	if err != nil {
		return nil, fmt.Errorf("find where %s forked: %w", branch, err)
	}
	base = strings.TrimSpace(base)
	raw, err := git(ctx, repo, nil, "diff", "--raw", "-z", "--no-renames", base, ref)
	if err != nil {
		return nil, err
	}
	files, err := checkRaw(branch, raw)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return &MergeResult{Branch: branch}, nil
	}
	patch, err := git(ctx, repo, nil, "diff", "--binary", "--no-renames", "--full-index", base, ref)
	if err != nil {
		return nil, err
	}
	if _, err := git(ctx, repo, strings.NewReader(patch), "apply", "--check", "--whitespace=nowarn", "-"); err != nil {
		ge, ok := err.(*GitError)
		if !ok {
			return nil, err
		}
		return nil, &ConflictError{Branch: branch, Detail: firstLines(ge.Stderr, 12)}
	}
	if _, err := git(ctx, repo, strings.NewReader(patch), "apply", "--whitespace=nowarn", "-"); err != nil {
		return nil, fmt.Errorf("apply %s: %w", branch, err)
	}
	stat, _ := git(ctx, repo, nil, "diff", "--stat=100", base, ref)
	return &MergeResult{Branch: branch, Files: files, Stat: stat}, nil
}

// checkRaw reads `git diff --raw -z` output and returns the changed paths,
// refusing links, submodules and protected paths.
func checkRaw(branch, raw string) ([]string, error) {
	parts := strings.Split(raw, "\x00")
	var files []string
	for i := 0; i+1 < len(parts); i += 2 {
		meta, p := parts[i], parts[i+1]
		f := strings.Fields(strings.TrimPrefix(meta, ":"))
		if len(f) < 5 {
			continue
		}
		oldMode, newMode := f[0], f[1]
		for _, m := range []string{oldMode, newMode} {
			switch m {
			case "120000":
				return nil, &RefusedError{Branch: branch, Path: p, Why: "a symbolic link"}
			case "160000":
				return nil, &RefusedError{Branch: branch, Path: p, Why: "a submodule"}
			}
		}
		for _, part := range strings.Split(p, "/") {
			if slices.Contains(protectedNames, part) {
				return nil, &RefusedError{Branch: branch, Path: p, Why: "protected (" + path.Clean(part) + " is never written by mx-claw)"}
			}
		}
		files = append(files, p)
	}
	return files, nil
}
