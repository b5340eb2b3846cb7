package app

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/worktree"
)

func TestRecoverWorktreesOfDeadSubagents(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Parallel()
	ctx := context.Background()
	home, repo := t.TempDir(), t.TempDir()
	gitIn := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	gitIn("init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a\n"), 0o644)
	gitIn("add", "-A")
	gitIn("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
	st, err := store.Open(ctx, filepath.Join(home, DBFileName))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a := &App{Home: home, Store: st}
	mk := func(id string, status protocol.SessionStatus) string {
		dir := filepath.Join(worktreesDir(home), id)
		if _, err := worktree.Create(ctx, repo, dir, "mx-claw/general-"+id); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "work-"+id+".txt"), []byte(id+"\n"), 0o644)
		if status != "" {
			if err := st.CreateSession(ctx, &protocol.Session{ID: id, ParentID: "p", Status: status}); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	dead := mk("dead", protocol.StatusFailed)
	live := mk("live", protocol.StatusRunning)
	fresh := mk("fresh", "") // its session is not stored yet
	kept := a.recoverWorktrees(ctx)
	if len(kept) != 1 || kept[0] != "mx-claw/general-dead" {
		t.Errorf("kept %v", kept)
	}
	if _, err := os.Stat(dead); err == nil {
		t.Error("the dead subagent's worktree is still there")
	}
	if got := gitIn("show", "mx-claw/general-dead:work-dead.txt"); got != "dead\n" {
		t.Errorf("its work: %q", got)
	}
	for _, d := range []string{live, fresh} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was taken: %v", d, err)
		}
	}
	// An old folder without a session is a left-over too.
	old := time.Now().Add(-2 * leftOverAge)
	os.Chtimes(fresh, old, old)
	if kept := a.recoverWorktrees(ctx); len(kept) != 1 || !strings.HasSuffix(kept[0], "fresh") {
		t.Errorf("kept %v", kept)
	}
}
