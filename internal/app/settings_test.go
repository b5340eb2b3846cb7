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
	u1, _, err := a.settings(ws)
	if err != nil {
		t.Fatal(err)
	}
	u2, _, _ := a.settings(ws)
	if u1 != u2 {
		t.Error("unchanged settings were parsed again")
	}
	if err := os.WriteFile(path, []byte(`{"permissions":{"deny":["run_command(rm:*)"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(2 * time.Second)
	os.Chtimes(path, later, later)
	u3, _, err := a.settings(ws)
	if err != nil || u3 == u1 || len(u3.Deny) != 1 {
		t.Errorf("edited settings not reread: %+v, %v", u3, err)
	}
	if err := os.WriteFile(path, []byte(`{"permissions":{"allow":["run_command(go test"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(path, later.Add(time.Second), later.Add(time.Second))
	if _, _, err := a.settings(ws); err == nil {
		t.Error("a broken settings file was not reported")
	}
}
