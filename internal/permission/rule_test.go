package permission

import (
	"errors"
	"strings"
	"testing"
)

func TestParseRule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		tool    string
		pattern string
		kind    ruleKind
		problem string
	}{
		{in: "run_command", tool: "run_command", kind: ruleTool},
		{in: "run_command(go test:*)", tool: "run_command", pattern: "go test:*", kind: rulePrefix},
		{in: "run_command(npm run *)", tool: "run_command", pattern: "npm run *", kind: rulePrefix},
		{in: "run_command(npm run build)", tool: "run_command", pattern: "npm run build", kind: ruleExact},
		{in: "run_command(*)", tool: "run_command", pattern: "*", kind: ruleTool},
		{in: "run_command(make && make test)", tool: "run_command", pattern: "make && make test", kind: ruleExact},
		{in: "Bash(git log:*)", tool: "run_command", pattern: "git log:*", kind: rulePrefix},
		{in: "edit_file(src/**)", tool: "edit_file", pattern: "src/**", kind: rulePath},
		{in: "Read(~/.ssh/**)", tool: "read_file", pattern: "~/.ssh/**", kind: rulePath},
		{in: " write_file( /etc/** ) ", tool: "write_file", pattern: "/etc/**", kind: rulePath},
		{in: "mcp__github__*", tool: "mcp__github__*", kind: ruleTool},
		{in: "*", tool: "*", kind: ruleTool},
		{in: "run_command(go test", problem: `missing ")"`},
		{in: "run_command)", problem: `unexpected ")"`},
		{in: "", problem: "empty rule"},
		{in: "run_command()", problem: "empty pattern"},
		{in: "(ls)", problem: "missing tool name"},
		{in: "run command", problem: "invalid character"},
		{in: "*(src/**)", problem: "cannot take a pattern"},
		{in: "run_command(:*)", problem: "empty command prefix"},
		{in: "run_command(ls $USER:*)", problem: "plain words"},
		{in: "run_command(echo 'x)", problem: "command:"},
		{in: "read_file(~root/x)", problem: "~user"},
		{in: "read_file(src/[)", problem: "invalid path glob"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			r, err := ParseRule(tt.in)
			if tt.problem != "" {
				if err == nil || !strings.Contains(err.Error(), tt.problem) || !errors.Is(err, ErrInvalidRule) {
					t.Fatalf("ParseRule(%q) = %v, want an ErrInvalidRule containing %q", tt.in, err, tt.problem)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseRule(%q): %v", tt.in, err)
			}
			if r.Tool != tt.tool || r.Pattern != tt.pattern || r.kind != tt.kind || r.String() != tt.in {
				t.Errorf("ParseRule(%q) = %q %q kind %d, want %q %q kind %d", tt.in, r.Tool, r.Pattern, r.kind, tt.tool, tt.pattern, tt.kind)
			}
		})
	}
	_, err := ParseRule("run_command(go test")
	if want := `"run_command(go test" is not a valid rule: missing ")"`; err == nil || err.Error() != want {
		t.Errorf("error text = %v, want %s", err, want)
	}
}

// policy builds a trusted policy from user rule lists.
func policy(t *testing.T, mode Mode, allow, ask, deny []string) *Policy {
	t.Helper()
	s := &Settings{Path: "/home/u/.mx-claw/settings.json"}
	for _, l := range []struct {
		in  []string
		out *[]Rule
	}{{allow, &s.Allow}, {ask, &s.Ask}, {deny, &s.Deny}} {
		for _, text := range l.in {
			*l.out = append(*l.out, MustParseRule(text))
		}
	}
	p, err := NewPolicy(Options{Mode: mode, User: s})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCommandRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		allow, ask, deny []string
		mode             Mode
		cmd              string
		want             Action
		rule             string // the rule in the decision's source, if any
	}{
		{name: "prefix allows", allow: []string{"run_command(go test:*)"}, cmd: "go test ./...", want: Allow, rule: "run_command(go test:*)"},
		{name: "prefix alone", allow: []string{"run_command(go test:*)"}, cmd: "go test", want: Allow},
		{name: "space-star prefix", allow: []string{"run_command(go test *)"}, cmd: "go test -run X ./...", want: Allow},
		{name: "prefix on word boundary", allow: []string{"run_command(go test:*)"}, cmd: "go testx", want: Ask},
		{name: "git log does not match logout", allow: []string{"run_command(git log:*)"}, cmd: "git logout", want: Ask},
		{name: "deny git log not logout", deny: []string{"run_command(git log:*)"}, cmd: "git logout", want: Ask},
		{name: "exact matches", allow: []string{"run_command(npm run build)"}, cmd: "npm run build", want: Allow},
		{name: "exact quoting does not matter", allow: []string{"run_command(npm run build)"}, cmd: "npm 'run' \"build\"", want: Allow},
		{name: "exact does not match more args", allow: []string{"run_command(npm run build)"}, cmd: "npm run build --prod", want: Ask},
		{name: "exact whole line", allow: []string{"run_command(go build ./... && go test ./...)"}, cmd: "go build ./...  &&  go test ./...", want: Allow},
		{name: "exact whole line differs", allow: []string{"run_command(go build ./... && go test ./...)"}, cmd: "go build ./... && go test ./x", want: Ask},
		{name: "each simple command judged", allow: []string{"run_command(go test:*)"}, cmd: "go test ./... && curl x", want: Ask},
		{name: "every part allowed", allow: []string{"run_command(go test:*)", "run_command(curl x)"}, cmd: "go test ./... && curl x", want: Allow},
		{name: "deny beats allow", allow: []string{"run_command(rm:*)"}, deny: []string{"run_command(rm -rf:*)"}, cmd: "rm -rf build", want: Deny, rule: "run_command(rm -rf:*)"},
		{name: "allow still applies", allow: []string{"run_command(rm:*)"}, deny: []string{"run_command(rm -rf:*)"}, cmd: "rm build.log", want: Allow},
		{name: "ask beats allow", allow: []string{"run_command(git:*)"}, ask: []string{"run_command(git push:*)"}, cmd: "git push origin main", want: Ask, rule: "run_command(git push:*)"},
		{name: "ask beats read-only", ask: []string{"run_command(cat:*)"}, cmd: "cat secrets.txt", want: Ask},
		{name: "ask rule holds in bypass", ask: []string{"run_command(git push:*)"}, mode: ModeBypass, cmd: "git push", want: Ask},
		{name: "deny rule holds in bypass", deny: []string{"run_command(curl:*)"}, mode: ModeBypass, cmd: "curl x", want: Deny},
		{name: "deny inside command", deny: []string{"run_command(curl:*)"}, cmd: "command curl x", want: Deny},
		{name: "deny inside env", deny: []string{"run_command(curl:*)"}, cmd: "env A=b curl x", want: Deny},
		{name: "deny inside sudo", deny: []string{"run_command(curl:*)"}, cmd: "sudo curl x", want: Deny},
		{name: "deny inside bash -c", deny: []string{"run_command(curl:*)"}, cmd: "bash -c 'curl x'", want: Deny},
		{name: "deny inside substitution", deny: []string{"run_command(curl:*)"}, cmd: "echo $(curl x)", want: Deny},
		{name: "deny by base name", deny: []string{"run_command(curl:*)"}, cmd: "/usr/bin/curl x", want: Deny},
		{name: "deny quoted name", deny: []string{"run_command(curl:*)"}, cmd: "c''url x", want: Deny},
		{name: "deny with env prefix", deny: []string{"run_command(curl:*)"}, cmd: "HTTPS_PROXY=x curl y", want: Deny},
		{name: "deny read-only command", deny: []string{"run_command(cat:*)"}, cmd: "cat .env", want: Deny},
		{name: "deny wins in plan", deny: []string{"run_command(ls:*)"}, mode: ModePlan, cmd: "ls", want: Deny},
		{name: "allow inside wrapper", allow: []string{"run_command(go test:*)"}, cmd: "timeout 60 go test ./...", want: Allow},
		{name: "allow not through sudo", allow: []string{"run_command(curl:*)"}, cmd: "sudo curl x", want: Ask},
		{name: "allow not with risky env", allow: []string{"run_command(go test:*)"}, cmd: "GOFLAGS=-toolexec=x go test ./...", want: Ask},
		{name: "allow with harmless env", allow: []string{"run_command(go test:*)"}, cmd: "CGO_ENABLED=0 go test ./...", want: Allow},
		{name: "allow rule with env", allow: []string{"run_command(GOFLAGS=-mod=mod go test:*)"}, cmd: "GOFLAGS=-mod=mod go test ./...", want: Allow},
		{name: "allow not by base name", allow: []string{"run_command(curl:*)"}, cmd: "./curl x", want: Ask},
		{name: "plan beats allow", allow: []string{"run_command(go test:*)"}, mode: ModePlan, cmd: "go test ./...", want: Deny},
		{name: "allow cannot lift catastrophic", allow: []string{"run_command", "run_command(rm:*)"}, cmd: "rm -rf /", want: Deny},
		{name: "allow cannot lift unresolved", allow: []string{"run_command"}, cmd: "$x", want: Ask},
		{name: "bare allow", allow: []string{"run_command"}, cmd: "curl x > out", want: Allow},
		{name: "bare deny", deny: []string{"run_command"}, cmd: "ls", want: Deny},
		{name: "star tool deny", deny: []string{"*"}, cmd: "ls", want: Deny},
		{name: "star pattern", allow: []string{"run_command(*)"}, cmd: "make", want: Allow},
		{name: "home in exact rule", deny: []string{"run_command(cat ~/.aws/credentials)"}, cmd: "cat $HOME/.aws/credentials", want: Deny},
		{name: "redirect not covered by prefix", allow: []string{"run_command(echo:*)"}, cmd: "curl x > ~/.bashrc", want: Ask},
		{name: "xargs child not exact", allow: []string{"run_command(rm -f)"}, cmd: "xargs rm -f", want: Ask},
		{name: "xargs child prefix", allow: []string{"run_command(rm:*)"}, cmd: "xargs rm -f", want: Allow},
		{name: "claude alias", allow: []string{"Bash(make:*)"}, cmd: "make test", want: Allow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := policy(t, tt.mode, tt.allow, tt.ask, tt.deny)
			d := p.Decide(commandRequest(tt.cmd))
			if d.Action != tt.want {
				t.Fatalf("Decide(%q) = %s, want %s\n%s", tt.cmd, d.Action, tt.want, Explain(d))
			}
			if tt.rule != "" && (d.Source.Kind != SourceRule || d.Source.Rule != tt.rule || d.Source.Origin == "") {
				t.Errorf("source = %+v, want rule %s with its origin", d.Source, tt.rule)
			}
		})
	}
}

func TestPathRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		allow, ask, deny []string
		mode             Mode
		tool, risk       string
		paths            []string
		want             Action
	}{
		{name: "read allowed", tool: "read_file", risk: "read", paths: []string{"/w/proj/a.go"}, want: Allow},
		{name: "edit asks", tool: "edit_file", risk: "write", paths: []string{"/w/proj/a.go"}, want: Ask},
		{name: "glob allows", allow: []string{"edit_file(src/**)"}, tool: "edit_file", risk: "write", paths: []string{"/w/proj/src/a/b.go"}, want: Allow},
		{name: "glob family", allow: []string{"edit_file(src/**)"}, tool: "write_file", risk: "write", paths: []string{"/w/proj/src/new.go"}, want: Allow},
		{name: "glob misses", allow: []string{"edit_file(src/**)"}, tool: "edit_file", risk: "write", paths: []string{"/w/proj/docs/a.md"}, want: Ask},
		{name: "glob not prefix of name", allow: []string{"edit_file(src/**)"}, tool: "edit_file", risk: "write", paths: []string{"/w/proj/srcx/a.go"}, want: Ask},
		{name: "dot-slash", allow: []string{"edit_file(./src/*.go)"}, tool: "edit_file", risk: "write", paths: []string{"/w/proj/src/a.go"}, want: Allow},
		{name: "trailing slash", allow: []string{"edit_file(src/)"}, tool: "edit_file", risk: "write", paths: []string{"/w/proj/src/x/y.go"}, want: Allow},
		{name: "all paths must match", allow: []string{"apply_patch(src/**)"}, tool: "apply_patch", risk: "write", paths: []string{"/w/proj/src/a.go", "/w/proj/b.go"}, want: Ask},
		{name: "home deny", deny: []string{"read_file(~/.ssh/**)"}, tool: "read_file", risk: "read", paths: []string{"/home/u/.ssh/id_rsa"}, want: Deny},
		{name: "home deny covers grep", deny: []string{"read_file(~/.ssh/**)"}, tool: "grep", risk: "read", paths: []string{"/home/u/.ssh"}, want: Deny},
		{name: "home deny covers list_dir", deny: []string{"Read(~/.ssh/**)"}, tool: "list_dir", risk: "read", paths: []string{"/home/u/.ssh"}, want: Deny},
		{name: "absolute", deny: []string{"write_file(/etc/**)"}, mode: ModeBypass, tool: "write_file", risk: "write", paths: []string{"/etc/hosts"}, want: Deny},
		{name: "specific name only", deny: []string{"write_file(src/**)"}, tool: "edit_file", risk: "write", mode: ModeBypass, paths: []string{"/w/proj/src/a.go"}, want: Allow},
		{name: "ask rule on read", ask: []string{"read_file(.env)"}, tool: "read_file", risk: "read", paths: []string{"/w/proj/.env"}, want: Ask},
		{name: "deny beats allow", allow: []string{"edit_file"}, deny: []string{"edit_file(secrets/**)"}, tool: "edit_file", risk: "write", paths: []string{"/w/proj/secrets/k"}, want: Deny},
		{name: "bare tool", allow: []string{"edit_file"}, tool: "edit_file", risk: "write", paths: []string{"/w/proj/x"}, want: Allow},
		{name: "mcp wildcard", allow: []string{"mcp__github__*"}, tool: "mcp__github__create_issue", risk: "execute", want: Allow},
		{name: "mcp other server", allow: []string{"mcp__github__*"}, tool: "mcp__slack__post", risk: "execute", want: Ask},
		{name: "unknown risk asks", tool: "mystery", risk: "", want: Ask},
		{name: "acceptEdits inside", mode: ModeAcceptEdits, tool: "edit_file", risk: "write", paths: []string{"/w/proj/a.go"}, want: Allow},
		{name: "acceptEdits outside", mode: ModeAcceptEdits, tool: "edit_file", risk: "write", paths: []string{"/home/u/a.go"}, want: Ask},
		{name: "acceptEdits .git", mode: ModeAcceptEdits, tool: "write_file", risk: "write", paths: []string{"/w/proj/.git/config"}, want: Ask},
		{name: "acceptEdits settings", mode: ModeAcceptEdits, tool: "write_file", risk: "write", paths: []string{"/w/proj/.mx-claw/settings.json"}, want: Ask},
		{name: "acceptEdits execute", mode: ModeAcceptEdits, tool: "mcp__x__y", risk: "execute", want: Ask},
		{name: "plan write", mode: ModePlan, tool: "edit_file", risk: "write", paths: []string{"/w/proj/a.go"}, want: Deny},
		{name: "plan read", mode: ModePlan, tool: "read_file", risk: "read", paths: []string{"/w/proj/a.go"}, want: Allow},
		{name: "plan beats allow", allow: []string{"edit_file"}, mode: ModePlan, tool: "edit_file", risk: "write", paths: []string{"/w/proj/a.go"}, want: Deny},
		{name: "bypass write", mode: ModeBypass, tool: "write_file", risk: "write", paths: []string{"/tmp/x"}, want: Allow},
		{name: "bypass ask rule", ask: []string{"write_file"}, mode: ModeBypass, tool: "write_file", risk: "write", paths: []string{"/w/proj/x"}, want: Ask},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := policy(t, tt.mode, tt.allow, tt.ask, tt.deny)
			d := p.Decide(Request{Tool: tt.tool, Risk: tt.risk, Paths: tt.paths, Workspace: testWS, Home: testHome})
			if d.Action != tt.want {
				t.Fatalf("Decide = %s (%s), want %s\n%s", d.Action, d.Source, tt.want, Explain(d))
			}
		})
	}
}

func TestPlanModeGuidance(t *testing.T) {
	t.Parallel()
	d := (&Policy{}).WithMode(ModePlan).Decide(Request{Tool: "edit_file", Risk: "write", Paths: []string{"/w/proj/src/a.go"}, Workspace: testWS})
	want := "plan mode: writing src/a.go is not allowed; describe the change instead"
	if d.Action != Deny || d.Reason != want {
		t.Errorf("got %s %q, want deny %q", d.Action, d.Reason, want)
	}
}

func TestRequestFromArgs(t *testing.T) {
	t.Parallel()
	p := policy(t, "", []string{"edit_file(src/**)"}, nil, []string{"run_command(curl:*)"})
	d := p.Decide(Request{Tool: "edit_file", Risk: "write", Args: []byte(`{"path":"src/a.go","old":"x"}`), Workspace: testWS})
	if d.Action != Allow {
		t.Errorf("edit_file from args = %s, want allow\n%s", d.Action, Explain(d))
	}
	d = p.Decide(Request{Tool: CommandTool, Risk: "execute", Args: []byte(`{"command":"curl x","workdir":"sub"}`), Workspace: testWS})
	if d.Action != Deny {
		t.Errorf("run_command from args = %s, want deny", d.Action)
	}
	patch := "*** Begin Patch\n*** Update File: src/a.go\n*** Move to: lib/a.go\n@@\n-x\n+y\n*** Add File: src/b.go\n+z\n*** End Patch"
	d = p.Decide(Request{Tool: "apply_patch", Risk: "write", Args: []byte(`{"patch":` + quoteJSON(patch) + `}`), Workspace: testWS})
	if d.Action != Ask || len(d.Parts) != 3 || d.Parts[1].Path != "/w/proj/lib/a.go" {
		t.Errorf("apply_patch from args = %s with parts %+v, want ask on the move target", d.Action, d.Parts)
	}
}

func quoteJSON(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

func TestArgPaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool, args string
		want       []string
	}{
		{"read_file", `{"path":"a.go"}`, []string{"a.go"}},
		{"list_dir", `{}`, []string{"."}},
		{"glob", `{"pattern":"*.go"}`, []string{"."}},
		{"grep", `{"pattern":"x","path":"src"}`, []string{"src"}},
		{"write_file", `{"path":"/abs/x","content":""}`, []string{"/abs/x"}},
		{"apply_patch", `{"patch":"*** Begin Patch\n*** Delete File: old.txt\n*** Add File: new.txt\n+x\n*** End Patch"}`, []string{"old.txt", "new.txt"}},
		{"run_command", `{"command":"ls"}`, nil},
		{"mcp__x__y", `{"q":1}`, nil},
		{"mcp__fs__read_file", `{"path":"/etc/passwd"}`, nil},
	}
	for _, tt := range tests {
		got, err := ArgPaths(tt.tool, []byte(tt.args))
		if err != nil || strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("ArgPaths(%s, %s) = %q, %v; want %q", tt.tool, tt.args, got, err, tt.want)
		}
	}
	if _, err := ArgPaths("read_file", []byte(`[`)); err == nil {
		t.Error("ArgPaths accepted invalid JSON")
	}
}
