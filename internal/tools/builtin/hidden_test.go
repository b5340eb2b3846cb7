package builtin

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/tools"
)

// hiddenFixture is a workspace with a secret under secrets/, and an Env
// that hides secrets/ as a deny rule read_file(secrets/**) does.
func hiddenFixture(t *testing.T) (*tools.Env, string) {
	t.Helper()
	env, root := newEnv(t)
	writeFiles(t, root, map[string]string{
		"secrets/k":        "TOPSECRET\n",
		"secrets/sub/k2":   "TOPSECRET two\n",
		"notes.txt":        "not a TOPSECRET here\n",
		"src/secrets.go":   "package src // TOPSECRET in code\n",
		"src/deep/other.k": "x\n",
	})
	hidden := filepath.Join(root, "secrets")
	env.Hidden = func(abs string) bool {
		return abs == hidden || strings.HasPrefix(abs, hidden+string(filepath.Separator))
	}
	return env, root
}

func TestGrepLeavesOutHiddenFiles(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, newTool func() *grep) {
		env, _ := hiddenFixture(t)
		out, err := run(t, newTool(), env, `{"pattern":"TOPSECRET"}`)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out, "secrets/k") || strings.Contains(out, "secrets/sub") {
			t.Errorf("grep showed a hidden file:\n%s", out)
		}
		if !strings.Contains(out, "notes.txt:1:") || !strings.Contains(out, "src/secrets.go:1:") {
			t.Errorf("grep lost a visible file:\n%s", out)
		}
		if strings.Contains(out, "more") {
			t.Errorf("hidden matches were counted:\n%s", out)
		}
	})
}

func TestGlobLeavesOutHiddenFiles(t *testing.T) {
	t.Parallel()
	env, _ := hiddenFixture(t)
	out, err := run(t, newGlob(), env, `{"pattern":"**/*k*"}`)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "secrets/") || !strings.Contains(out, "src/deep/other.k") {
		t.Errorf("glob output:\n%s", out)
	}
}

func TestListDirLeavesOutHiddenEntries(t *testing.T) {
	t.Parallel()
	env, _ := hiddenFixture(t)
	out, err := run(t, newListDir(), env, `{"depth":3}`)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "secrets/") || strings.Contains(out, "k2") {
		t.Errorf("list_dir showed a hidden entry:\n%s", out)
	}
	if !strings.Contains(out, "src/") || !strings.Contains(out, "1 entry that deny rules or secret stores cover") {
		t.Errorf("list_dir output:\n%s", out)
	}
}
