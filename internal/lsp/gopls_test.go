package lsp

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/tools"
)

// goModule writes a one-package module and returns its folder and the
// path of its main.go.
func goModule(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	write(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.22\n")
	main := filepath.Join(dir, "main.go")
	write(t, main, "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n")
	return dir, main
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func needGopls(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not installed; gopls needs it")
	}
	if _, err := lookPath("gopls", os.Environ()); err != nil {
		t.Skip("gopls is not installed (make test-deps installs it with go install); skipping the real language server test")
	}
}

// TestGoplsReportsTheErrorAnEditBringsAndItsFix drives a real gopls: an
// edit that breaks the build gets the compiler's error, the fix clears it,
// and an error that was there before an edit is not reported as new.
func TestGoplsReportsTheErrorAnEditBringsAndItsFix(t *testing.T) {
	needGopls(t)
	t.Parallel()
	root, main := goModule(t)
	m := NewManager(Options{Timeout: 60 * time.Second})
	defer m.Close()
	ctx := context.Background()

	after := m.Check(ctx, "s1", root, []string{main})
	if after == nil {
		t.Fatal("no check for a .go file")
	}
	write(t, main, "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(notDefined)\n}\n")
	note := after(ctx)
	if !strings.Contains(note, "gopls reports new errors in main.go") || !strings.Contains(note, "main.go:6:14: undefined: notDefined") {
		t.Fatalf("after breaking the build: %q", note)
	}

	// A second, unrelated edit: the old error is not new.
	after = m.Check(ctx, "s1", root, []string{main})
	write(t, main, "package main\n\nimport \"fmt\"\n\n// main prints.\nfunc main() {\n\tfmt.Println(notDefined)\n}\n")
	if note := after(ctx); note != "" {
		t.Errorf("an edit that brought no error got %q", note)
	}

	// The fix clears it.
	after = m.Check(ctx, "s1", root, []string{main})
	write(t, main, "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"fixed\")\n}\n")
	if note := after(ctx); note != "gopls reports no errors in main.go now." {
		t.Errorf("after the fix: %q", note)
	}

	// The diagnostics tool on demand, and a file no server checks.
	write(t, main, "package main\n\nfunc main() {\n\tvar x int\n}\n")
	ws, err := tools.NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	tool := NewTool(m)
	res, err := tool.Run(ctx, &tools.Env{Workspace: ws, SessionID: "s1"}, json.RawMessage(`{"path":"main.go"}`))
	if err != nil || !strings.Contains(res.Content, "declared and not used: x") {
		t.Errorf("diagnostics tool: %q, %v", res.Content, err)
	}
	res, err = tool.Run(ctx, &tools.Env{Workspace: ws, SessionID: "s1"}, json.RawMessage(`{"path":"go.mod"}`))
	if err != nil || !strings.Contains(res.Content, "No language server is configured for .mod files") {
		t.Errorf("go.mod: %q, %v", res.Content, err)
	}
	if m.Check(ctx, "s1", root, []string{filepath.Join(root, "README.md")}) != nil {
		t.Error("a file without a server is checked")
	}
}

func TestNoServerIsSaidOnce(t *testing.T) {
	t.Parallel()
	root, main := goModule(t)
	m := NewManager(Options{Servers: []ServerConfig{{Name: "nols", Command: "mx-claw-no-such-language-server", Extensions: []string{".go"}}}})
	defer m.Close()
	ctx := context.Background()
	note := m.Check(ctx, "s1", root, []string{main})(ctx)
	if !strings.Contains(note, "No diagnostics from nols in this session") || !strings.Contains(note, "not installed") {
		t.Errorf("first check: %q", note)
	}
	if note := m.Check(ctx, "s1", root, []string{main})(ctx); note != "" {
		t.Errorf("said again: %q", note)
	}
	if note := m.Check(ctx, "s2", root, []string{main})(ctx); note == "" {
		t.Error("another session is told too")
	}
}

func TestParseSettings(t *testing.T) {
	t.Parallel()
	servers, on, _, err := ParseSettings(json.RawMessage(`{"servers": {"gopls": null,
	  "pyright": {"command": "pyright-langserver", "args": ["--stdio"], "extensions": ["py", ".pyi"]}}}`))
	if err != nil || !on || len(servers) != 1 || servers[0].Name != "pyright" || servers[0].Extensions[0] != ".py" {
		t.Errorf("ParseSettings = %+v, %v, %v", servers, on, err)
	}
	if _, on, _, _ := ParseSettings(json.RawMessage(`{"enabled": false}`)); on {
		t.Error("enabled: false")
	}
	if _, _, _, err := ParseSettings(json.RawMessage(`{"servers": {"x": {"extensions": [".x"]}}}`)); err == nil || !strings.Contains(err.Error(), "lsp.servers.x") {
		t.Errorf("a server without a command: %v", err)
	}
	servers, on, _, _ = ParseSettings(nil)
	if !on || len(servers) != 1 || servers[0].Command != "gopls" {
		t.Errorf("defaults %+v", servers)
	}
}
