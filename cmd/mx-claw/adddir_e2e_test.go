package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
)

// TestAddDir: --add-dir and permissions.additionalDirectories give the
// tools a root beside the workspace, with the workspace's protected paths;
// without them the same path is outside.
func TestAddDir(t *testing.T) {
	t.Parallel()
	other, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("shared notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	calls := func() []llmtest.Reply {
		return []llmtest.Reply{
			llmtest.Call("read_file", `{"path":"`+filepath.Join(other, "notes.txt")+`"}`),
			llmtest.Call("write_file", `{"path":"`+filepath.Join(other, "out.txt")+`","content":"written\n"}`),
			llmtest.Call("write_file", `{"path":"`+filepath.Join(other, ".mx-claw/settings.json")+`","content":"{}"}`),
			llmtest.Text("done"),
		}
	}
	check := func(t *testing.T, e *env, r result, inside bool) {
		t.Helper()
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		reqs := e.srv.ChatRequests()
		res := toolResults(reqs[len(reqs)-1])
		if inside {
			if !strings.Contains(res["call_1"], "shared notes") {
				t.Errorf("read_file in the added directory: %s", res["call_1"])
			}
			if data, err := os.ReadFile(filepath.Join(other, "out.txt")); err != nil || string(data) != "written\n" {
				t.Errorf("write_file in the added directory: %v %q (%s)", err, data, res["call_2"])
			}
			if !strings.Contains(res["call_3"], "protected") {
				t.Errorf("a protected path of the added directory was not asked for: %s", res["call_3"])
			}
		} else if !strings.Contains(res["call_1"], "outside the workspace") {
			t.Errorf("read_file outside without --add-dir: %s", res["call_1"])
		}
		os.Remove(filepath.Join(other, "out.txt"))
	}

	t.Run("without", func(t *testing.T) {
		e := newEnv(t, calls()...)
		check(t, e, e.run("", "run", "--permission-mode", "acceptEdits", "use the shared notes"), false)
	})
	t.Run("flag", func(t *testing.T) {
		e := newEnv(t, calls()...)
		check(t, e, e.run("", "run", "--permission-mode", "acceptEdits", "--add-dir", other, "use the shared notes"), true)
	})
	t.Run("settings", func(t *testing.T) {
		e := newEnv(t, calls()...)
		e.writeHome("settings.json", `{"permissions":{"additionalDirectories":["`+other+`"]}}`)
		check(t, e, e.run("", "run", "--permission-mode", "acceptEdits", "use the shared notes"), true)
	})
	t.Run("missing", func(t *testing.T) {
		e := newEnv(t)
		r := e.run("", "run", "--add-dir", filepath.Join(other, "nope"), "hi")
		if r.code != 2 || !strings.Contains(r.stderr, "does not exist") {
			t.Errorf("exit %d: %s", r.code, r.stderr)
		}
	})
}
