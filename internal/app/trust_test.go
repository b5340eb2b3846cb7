package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrustIdentity: a folder keeps its identity; a repository gets a
// token only when trusted; a worktree's .git file leads to its git
// directory; a folder made anew at the same path, or a repository without
// the token, has another identity.
func TestTrustIdentity(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "ws")
	os.MkdirAll(filepath.Join(dir, ".git"), 0o755)
	before, err := TrustIdentity(dir, false)
	if err != nil || !strings.HasSuffix(before, ";git:") {
		t.Fatalf("identity before trust: %q, %v", before, err)
	}
	trusted, err := TrustIdentity(dir, true)
	if err != nil || trusted == before || !strings.HasPrefix(trusted, strings.TrimSuffix(before, ";git:")) {
		t.Fatalf("identity when trusted: %q, %v (before %q)", trusted, err, before)
	}
	if again, _ := TrustIdentity(dir, false); again != trusted {
		t.Errorf("identity changed: %q, then %q", trusted, again)
	}
	if again, _ := TrustIdentity(dir, true); again != trusted {
		t.Errorf("trusting again made a new token: %q, then %q", trusted, again)
	}
	// A fresh clone at the same path: no token.
	os.RemoveAll(filepath.Join(dir, ".git"))
	os.MkdirAll(filepath.Join(dir, ".git"), 0o755)
	if fresh, _ := TrustIdentity(dir, false); fresh == trusted {
		t.Errorf("a new repository at the path has the trusted identity %q", fresh)
	}

	// A worktree: .git is a file naming the git directory.
	wt := filepath.Join(t.TempDir(), "wt")
	gd := filepath.Join(t.TempDir(), "gitdir")
	os.MkdirAll(wt, 0o755)
	os.MkdirAll(gd, 0o755)
	os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+gd+"\n"), 0o644)
	if _, err := TrustIdentity(wt, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(gd, TrustMarkerName)); err != nil {
		t.Errorf("the token is not in the worktree's git directory: %v", err)
	}

	// A plain folder: bound by device and inode.
	plain := filepath.Join(t.TempDir(), "plain")
	os.Mkdir(plain, 0o755)
	id1, _ := TrustIdentity(plain, true)
	os.Rename(plain, plain+".old")
	os.Mkdir(plain, 0o755)
	if id2, _ := TrustIdentity(plain, false); id1 == id2 {
		t.Errorf("a new folder at the same path has the same identity %q", id1)
	}
}
