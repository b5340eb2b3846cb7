package builtin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/tools"
)

// newEnv returns an Env on a fresh workspace and the workspace root.
func newEnv(t *testing.T) (*tools.Env, string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, err := tools.NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	return &tools.Env{Workspace: ws, SessionID: "test"}, root
}

// writeFiles creates files (name → content) under root.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// run validates args against the tool's schema, as the agent does, and
// runs the tool.
func run(t *testing.T, tool tools.Tool, env *tools.Env, args string) (string, error) {
	t.Helper()
	reg, err := tools.NewRegistry(tool)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Validate(tool.Info().Name, json.RawMessage(args)); err != nil {
		t.Fatalf("%s(%s) does not validate: %v", tool.Info().Name, args, err)
	}
	res, err := tool.Run(context.Background(), env, json.RawMessage(args))
	if err == nil && res.IsError {
		t.Fatalf("%s(%s) returned an error result: %s", tool.Info().Name, args, res.Content)
	}
	return res.Content, err
}

func TestAll(t *testing.T) {
	t.Parallel()
	all := All()
	reg, err := tools.NewRegistry(all...)
	if err != nil {
		t.Fatalf("schemas of All() do not compile: %v", err)
	}
	want := []struct {
		name string
		risk tools.Risk
		safe bool
	}{
		{"read_file", tools.RiskRead, true},
		{"list_dir", tools.RiskRead, true},
		{"glob", tools.RiskRead, true},
		{"grep", tools.RiskRead, true},
		{"write_file", tools.RiskWrite, false},
		{"edit_file", tools.RiskWrite, false},
		{"apply_patch", tools.RiskWrite, false},
		{"todo_write", tools.RiskRead, false},
	}
	got := reg.Tools()
	if len(got) != len(want) {
		t.Fatalf("All() has %d tools, want %d", len(got), len(want))
	}
	for i, w := range want {
		tool := got[i]
		if tool.Info().Name != w.name || tool.Info().Risk != w.risk || tool.Info().ConcurrencySafe != w.safe {
			t.Errorf("tool %d = %s/%s/%v, want %s/%s/%v", i, tool.Info().Name, tool.Info().Risk,
				tool.Info().ConcurrencySafe, w.name, w.risk, w.safe)
		}
		if len(strings.TrimSpace(tool.Info().Description)) < 100 {
			t.Errorf("%s has a too short description: %q", tool.Info().Name, tool.Info().Description)
		}
		var schema map[string]any
		if err := json.Unmarshal(tool.Info().Schema, &schema); err != nil {
			t.Errorf("%s schema: %v", tool.Info().Name, err)
		}
	}
}

func TestSchemas(t *testing.T) {
	t.Parallel()
	reg, err := tools.NewRegistry(All()...)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool, args string
		ok         bool
	}{
		{"read_file", `{"path":"a"}`, true},
		{"read_file", `{"path":"a","offset":2,"limit":10}`, true},
		{"read_file", `{}`, false},
		{"read_file", `{"path":"a","offset":0}`, false},
		{"read_file", `{"path":"a","lines":3}`, false},
		{"list_dir", ``, true},
		{"list_dir", `{"path":"src","depth":5}`, true},
		{"list_dir", `{"depth":6}`, false},
		{"list_dir", `{"depth":0}`, false},
		{"write_file", `{"path":"a","content":""}`, true},
		{"write_file", `{"path":"a"}`, false},
		{"write_file", `{"path":"a","content":3}`, false},
	}
	for _, tt := range tests {
		err := reg.Validate(tt.tool, json.RawMessage(tt.args))
		if (err == nil) != tt.ok {
			t.Errorf("Validate(%s, %s) = %v, want ok=%v", tt.tool, tt.args, err, tt.ok)
		}
	}
}

func TestSummary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool tools.Tool
		args string
		want string
	}{
		{newReadFile(), `{"path":"src/main.go"}`, "Read src/main.go"},
		{newReadFile(), `{"path":"./src//main.go","offset":3}`, "Read src/main.go"},
		{newListDir(), `{}`, "List ."},
		{newListDir(), `{"path":"internal/"}`, "List internal"},
		{newWriteFile(), `{"path":"a/b.txt","content":"hello"}`, "Write a/b.txt (5 bytes)"},
	}
	for _, tt := range tests {
		if got := tt.tool.Summary(json.RawMessage(tt.args)); got != tt.want {
			t.Errorf("%s.Summary(%s) = %q, want %q", tt.tool.Info().Name, tt.args, got, tt.want)
		}
	}
}

func TestNoWorkspace(t *testing.T) {
	t.Parallel()
	for _, tool := range All() {
		if tool.Info().Name == "todo_write" {
			continue // keeps no files
		}
		_, err := tool.Run(context.Background(), &tools.Env{}, json.RawMessage(`{"path":"a","content":""}`))
		if err == nil {
			t.Errorf("%s ran without a workspace", tool.Info().Name)
		}
	}
}

func TestHumanSize(t *testing.T) {
	t.Parallel()
	tests := map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 20: "5.0 MiB"}
	for n, want := range tests {
		if got := humanSize(n); got != want {
			t.Errorf("humanSize(%d) = %q, want %q", n, got, want)
		}
	}
}
