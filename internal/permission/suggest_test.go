package permission

import "testing"

func TestSuggestRule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		req  Request
		want string
	}{
		{commandRequest("go test ./..."), "run_command(go test:*)"},
		{commandRequest("npm run build"), "run_command(npm run:*)"},
		{commandRequest("git push origin main"), "run_command(git push:*)"},
		{commandRequest("touch a"), "run_command(touch a)"},
		{commandRequest("rm -rf build"), "run_command(rm -rf build)"},
		{commandRequest("ls && go build ./..."), "run_command(go build:*)"},
		{commandRequest("go build ./... && curl x"), "run_command(go build ./... && curl x)"},
		{commandRequest("echo x > out.txt"), "run_command(echo x > out.txt)"},
		{commandRequest("git commit -m 'fix: the bug'"), "run_command(git commit:*)"},
		{commandRequest("python3 -c 'print(1)'"), "run_command(python3 -c 'print(1)')"},
		{commandRequest("GOFLAGS=-mod=mod go test ./..."), "run_command(GOFLAGS=-mod=mod go test ./...)"},
		{commandRequest("ls"), ""},
		{commandRequest("rm -rf /"), ""},
		{commandRequest("$x y"), ""},
		{commandRequest("curl x | bash"), ""},
		{Request{Tool: "edit_file", Risk: "write", Paths: []string{"/w/proj/src/main.go"}, Workspace: testWS, Home: testHome}, "edit_file(src/main.go)"},
		{Request{Tool: "write_file", Risk: "write", Paths: []string{"/home/u/notes.md"}, Workspace: testWS, Home: testHome}, "write_file(~/notes.md)"},
		{Request{Tool: "write_file", Risk: "write", Paths: []string{"/srv/x"}, Workspace: testWS, Home: testHome}, "write_file(/srv/x)"},
		{Request{Tool: "edit_file", Risk: "write", Paths: []string{"/w/proj/app/[id].tsx"}, Workspace: testWS}, `edit_file(app/\[id\].tsx)`},
		{Request{Tool: "apply_patch", Risk: "write", Paths: []string{"/w/proj/a.go", "/w/proj/b,c.go"}, Workspace: testWS}, `apply_patch({a.go,b\,c.go})`},
		{Request{Tool: "read_file", Risk: "read", Paths: []string{"/w/proj/a.go"}, Workspace: testWS}, ""},
		// An MCP tool is granted as a whole; a "path" in its arguments is
		// the server's, not a workspace path.
		{Request{Tool: "mcp__github__create_issue", Risk: "execute", Args: []byte(`{"title":"x"}`), Workspace: testWS}, "mcp__github__create_issue"},
		{Request{Tool: "mcp__fs__write_file", Risk: "execute", Args: []byte(`{"path":"/etc/passwd","content":"x"}`), Workspace: testWS}, "mcp__fs__write_file"},
		{Request{Tool: "mcp__fs__read_file", Risk: "read", Args: []byte(`{"path":"a"}`), Workspace: testWS}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.req.Command+tt.req.Tool, func(t *testing.T) {
			t.Parallel()
			got := SuggestRule(tt.req)
			if got != tt.want {
				t.Fatalf("SuggestRule = %q, want %q", got, tt.want)
			}
			if got == "" {
				return
			}
			// The suggestion, granted, must let exactly this call through.
			p, err := NewPolicy(Options{Grants: []Grant{{Rule: got, Origin: "session grant"}}})
			if err != nil {
				t.Fatalf("suggestion does not parse: %v", err)
			}
			if d := p.Decide(tt.req); d.Action != Allow {
				t.Errorf("with the grant %s: %s\n%s", got, d.Action, Explain(d))
			}
		})
	}
}

func TestGrantIsNarrow(t *testing.T) {
	t.Parallel()
	rule := SuggestRule(commandRequest("touch a"))
	p, err := NewPolicy(Options{Grants: []Grant{{Rule: rule, Origin: "session grant"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"rm ~/a", "touch b", "touch a b", "touch a && curl x", "sudo touch a"} {
		if d := p.Decide(commandRequest(cmd)); d.Action == Allow {
			t.Errorf("granting %s allowed %q", rule, cmd)
		}
	}
	rule = SuggestRule(Request{Tool: "edit_file", Risk: "write", Paths: []string{"/w/proj/src/a.go"}, Workspace: testWS})
	p, _ = NewPolicy(Options{Grants: []Grant{{Rule: rule, Origin: "session grant"}}})
	for _, path := range []string{"/w/proj/src/b.go", "/w/proj/src/a.go.bak", "/w/proj/src"} {
		if d := p.Decide(Request{Tool: "edit_file", Risk: "write", Paths: []string{path}, Workspace: testWS}); d.Action == Allow {
			t.Errorf("granting %s allowed %s", rule, path)
		}
	}
}
