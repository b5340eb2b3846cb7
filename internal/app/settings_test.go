package app

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSettingsReadOncePerVersion(t *testing.T) {
	t.Parallel()
	home, ws := t.TempDir(), t.TempDir()
	a := &App{Home: home}
	path := filepath.Join(home, "settings.json")
	if err := os.WriteFile(path, []byte(`{"permissions":{"allow":["run_command(make:*)"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	u1, _, err := a.settings(ws, false)
	if err != nil {
		t.Fatal(err)
	}
	u2, _, _ := a.settings(ws, false)
	if u1 != u2 {
		t.Error("unchanged settings were parsed again")
	}
	if err := os.WriteFile(path, []byte(`{"permissions":{"deny":["run_command(rm:*)"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(2 * time.Second)
	os.Chtimes(path, later, later)
	u3, _, err := a.settings(ws, false)
	if err != nil || u3 == u1 || len(u3.Deny) != 1 {
		t.Errorf("edited settings not reread: %+v, %v", u3, err)
	}
	if err := os.WriteFile(path, []byte(`{"permissions":{"allow":["run_command(go test"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(path, later.Add(time.Second), later.Add(time.Second))
	if _, _, err := a.settings(ws, false); err == nil {
		t.Error("a broken settings file was not reported")
	}
}

// A project's settings read once are read again when .mx-claw is swapped
// for a link, which is then refused, even if the link's target has the
// same size and time as the file that was there.
func TestProjectSettingsLinkSwappedIn(t *testing.T) {
	t.Parallel()
	home, ws := t.TempDir(), t.TempDir()
	a := &App{Home: home}
	text := []byte(`{"permissions":{"deny":["run_command(curl:*)"]}}`)
	for _, d := range []string{".mx-claw", "decoy"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, d, "settings.json"), text, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, p, err := a.settings(ws, true); err != nil || len(p.Deny) != 1 {
		t.Fatalf("project settings: %+v, %v", p, err)
	}
	if err := os.RemoveAll(filepath.Join(ws, ".mx-claw")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("decoy", filepath.Join(ws, ".mx-claw")); err != nil {
		t.Skipf("symlinks: %v", err)
	}
	if _, _, err := a.settings(ws, true); err == nil {
		t.Error("a .mx-claw swapped for a link was not refused")
	}
}
