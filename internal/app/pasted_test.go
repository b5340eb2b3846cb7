package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mx-claw/mx-claw/internal/config"
)

// TestSessionFilesRemovedWithSession: the pictures pasted into a
// session's messages and the files its hooks were given live under the
// home and go when the session does; another session's stay.
func TestSessionFilesRemovedWithSession(t *testing.T) {
	t.Parallel()
	home, ws := t.TempDir(), t.TempDir()
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Open(context.Background(), home, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx := context.Background()
	keep, err := a.Core.CreateSession(ctx, ws, "openai/gpt-4.1", nil)
	if err != nil {
		t.Fatal(err)
	}
	gone, err := a.Core.CreateSession(ctx, ws, "openai/gpt-4.1", nil)
	if err != nil {
		t.Fatal(err)
	}
	b := NewBackend(a, ws, "")
	for _, id := range []string{keep.ID, gone.ID} {
		dir := b.PastedImageDir(id)
		if filepath.Dir(filepath.Dir(dir)) != home {
			t.Fatalf("PastedImageDir = %s, not under the home %s", dir, home)
		}
		writeTree(t, dir, map[string]string{"clipboard-1.png": "png"})
		writeTree(t, filepath.Join(home, "hooks", id), map[string]string{"transcript.jsonl": "{}\n", "env.sh": "export A=1\n"})
	}
	if _, err := a.DeleteSessions(ctx, []string{gone.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(b.PastedImageDir(gone.ID)); !os.IsNotExist(err) {
		t.Errorf("the deleted session's pasted images are still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(b.PastedImageDir(keep.ID), "clipboard-1.png")); err != nil {
		t.Errorf("another session's pasted image went: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, "hooks", gone.ID)); !os.IsNotExist(err) {
		t.Errorf("the deleted session's hook files (its transcript copy) are still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, "hooks", keep.ID, "transcript.jsonl")); err != nil {
		t.Errorf("another session's hook files went: %v", err)
	}
}
