package permission

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fileRequest is a call of a file tool with the given path argument.
func fileRequest(tool, risk, path string) Request {
	args, _ := json.Marshal(map[string]string{"path": path})
	return Request{Tool: tool, Risk: risk, Args: args, Workspace: testWS, Home: testHome}
}

func TestCodeRunningFilesAskInAcceptEdits(t *testing.T) {
	t.Parallel()
	p := (&Policy{}).WithMode(ModeAcceptEdits)
	tests := []struct{ path, named string }{
		{".mcp.json", ".mcp.json"},
		{"sub/.envrc", ".envrc"},
		{".vscode/settings.json", ".vscode/settings.json"},
		{".vscode/tasks.json", ".vscode/tasks.json"},
		{".vscode/launch.json", ".vscode/launch.json"},
		{".idea/workspace.xml", ".idea"},
		{".bashrc", ".bashrc"},
		{".zshrc", ".zshrc"},
		{".profile", ".profile"},
		{".config/fish/config.fish", "fish"},
		{".gitconfig", ".gitconfig"},
		{".gitmodules", ".gitmodules"},
		{".git/hooks/pre-commit", ".git"},
		{"AGENTS.md", "agents.md"},
		{"docs/AGENTS.md", "agents.md"},
		{"CLAUDE.md", "claude.md"},
		{".claude/settings.json", ".claude"},
		{".mx-claw/settings.json", ".mx-claw"},
		{".MX-CLAW/settings.json", ".mx-claw"},
		{".Envrc", ".envrc"},
		{".husky/pre-commit", ".husky"},
		{".pre-commit-config.yaml", "pre-commit"},
		{"app.code-workspace", "VS Code workspace"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			for _, tool := range []string{"write_file", "edit_file"} {
				d := p.Decide(fileRequest(tool, "write", tt.path))
				if d.Action != Ask || d.Source.Check != CheckProtected || !strings.Contains(d.Reason, tt.named) {
					t.Errorf("%s %s: %s (%s) %q; want an ask naming %s", tool, tt.path, d.Action, d.Source, d.Reason, tt.named)
				}
			}
			d := p.Decide(commandRequest("echo x > " + tt.path))
			if d.Action != Ask || !strings.Contains(d.Reason, tt.named) {
				t.Errorf("redirect to %s: %s %q; want an ask naming %s", tt.path, d.Action, d.Reason, tt.named)
			}
			if d := (&Policy{}).WithMode(ModeBypass).Decide(fileRequest("write_file", "write", tt.path)); d.Action != Allow {
				t.Errorf("bypass: %s", d.Action)
			}
		})
	}
	for _, path := range []string{"src/main.go", ".vscode/extensions.json", "notes/envrc.txt", "README.md", ".github/x.yml"} {
		if d := p.Decide(fileRequest("write_file", "write", path)); d.Action != Allow {
			t.Errorf("write_file %s: %s %q; want allow", path, d.Action, d.Reason)
		}
	}
}

// linkedWorkspace makes a workspace with .mx-claw -> decoy and notes ->
// .envrc, the shapes git can check out.
func linkedWorkspace(t *testing.T) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "decoy"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("decoy", filepath.Join(ws, ".mx-claw")); err != nil {
		t.Skipf("symlinks not supported: %v", err)
	}
	if err := os.Symlink(".envrc", filepath.Join(ws, "notes")); err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestProtectedAsWrittenAndAsResolved(t *testing.T) {
	t.Parallel()
	ws := linkedWorkspace(t)
	p := (&Policy{}).WithMode(ModeAcceptEdits)
	for _, tt := range []struct {
		arg      string // the path as the model writes it
		resolved string // the canonical path the agent passes
	}{
		{".mx-claw/settings.json", "decoy/settings.json"}, // written protected, resolves elsewhere
		{"notes", ".envrc"}, // written harmless, resolves protected
	} {
		req := fileRequest("write_file", "write", tt.arg)
		req.Workspace, req.Paths = ws, []string{filepath.Join(ws, tt.resolved)}
		if d := p.Decide(req); d.Action != Ask || d.Source.Check != CheckProtected {
			t.Errorf("write_file %s (-> %s): %s (%s) %q; want a protected-path ask", tt.arg, tt.resolved, d.Action, d.Source, d.Reason)
		}
		cmd := commandRequest("echo x > " + tt.arg)
		cmd.Workspace = ws
		if d := p.Decide(cmd); d.Action != Ask {
			t.Errorf("echo x > %s: %s %q; want ask", tt.arg, d.Action, d.Reason)
		}
	}
}

func TestLoadProjectSettingsRefusesLinks(t *testing.T) {
	t.Parallel()
	ws := linkedWorkspace(t)
	if err := os.WriteFile(filepath.Join(ws, "decoy", "settings.json"), []byte(`{"permissions":{"allow":["run_command(curl:*)"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, trusted := range []bool{false, true} {
		_, err := LoadProjectSettings(ws, trusted)
		if !errors.Is(err, ErrSymlinkedConfig) || !errors.Is(err, ErrInvalidSettings) ||
			!strings.Contains(err.Error(), ".mx-claw is a symbolic link (to decoy)") {
			t.Errorf("trusted=%v: err = %v, want a refusal naming the link", trusted, err)
		}
	}

	// A real directory whose settings.json is a link is refused too.
	ws2 := t.TempDir()
	if err := os.Mkdir(filepath.Join(ws2, ".mx-claw"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/null", filepath.Join(ws2, ".mx-claw", "settings.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadProjectSettings(ws2, true); !errors.Is(err, ErrSymlinkedConfig) {
		t.Errorf("linked settings.json: %v", err)
	}
}

func TestUntrustedProjectSettingsParseOnlyWhatTightens(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	path := ProjectSettingsPath(ws)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	// The allow rule and additionalDirectories are malformed: a trusted
	// load fails on them, an untrusted one does not look.
	text := `{"permissions":{"allow":["run_command(go test","edit_file(**)"],"deny":["run_command(curl:*)"],
		"ask":["run_command(git push:*)"],"defaultMode":"plan","additionalDirectories":7},
		"hooks":{"PreToolUse":"not even a list"}}`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadProjectSettings(ws, true); !errors.Is(err, ErrInvalidSettings) {
		t.Fatalf("trusted load of malformed settings: %v", err)
	}
	s, err := LoadProjectSettings(ws, false)
	if err != nil {
		t.Fatal(err)
	}
	if !s.TightenOnly || len(s.Allow) != 0 || len(s.Deny) != 1 || len(s.Ask) != 1 || s.DefaultMode != ModePlan ||
		s.Other != nil || len(s.UnparsedAllow) != 2 || strings.Join(s.UnparsedKeys, ",") != "hooks" {
		t.Fatalf("untrusted settings = %+v", s)
	}
	p, err := NewPolicy(Options{Project: s})
	if err != nil {
		t.Fatal(err)
	}
	var entries []string
	for _, ig := range p.Ignored() {
		entries = append(entries, ig.Entry)
	}
	if got := strings.Join(entries, "; "); got != "permissions.allow: run_command(go test; permissions.allow: edit_file(**); hooks" {
		t.Errorf("ignored = %s", got)
	}
	if p.Mode() != ModePlan {
		t.Errorf("mode %s, want the project's tighter plan", p.Mode())
	}
	// A malformed deny rule still stops an untrusted load: a rule meant
	// to tighten is never dropped silently.
	if err := os.WriteFile(path, []byte(`{"permissions":{"deny":["run_command(curl"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadProjectSettings(ws, false); !errors.Is(err, ErrInvalidSettings) {
		t.Errorf("malformed deny rule: %v", err)
	}
}

func TestReadDenyRulesCoverCommands(t *testing.T) {
	t.Parallel()
	deny := func(mode Mode, rules ...string) *Policy {
		s := &Settings{Path: "/home/u/.mx-claw/settings.json"}
		for _, r := range rules {
			s.Deny = append(s.Deny, MustParseRule(r))
		}
		p, err := NewPolicy(Options{User: s, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		cmd   string
		mode  Mode
		rules []string
		want  Action
		check string // the hard check, if one decides
	}{
		{"cat secrets/k", ModeDefault, []string{"read_file(secrets/**)"}, Deny, ""},
		{"cat ./secrets/../secrets/k", ModeBypass, []string{"read_file(secrets/**)"}, Deny, ""},
		{"head -n1 < secrets/k", ModeDefault, []string{"read_file(secrets/**)"}, Deny, ""},
		{"cd secrets && cat k", ModeDefault, []string{"read_file(secrets/**)"}, Deny, ""},
		{"grep --file=secrets/k x", ModeDefault, []string{"read_file(secrets/**)"}, Deny, ""},
		{"git show HEAD:secrets/k", ModeDefault, []string{"read_file(secrets/**)"}, Deny, ""},
		{"ls secrets", ModeDefault, []string{"read_file(secrets/**)"}, Deny, ""},
		{"cat ~/.ssh/id_rsa", ModePlan, []string{"read_file(~/.ssh/**)"}, Deny, ""},
		{"rg -n TOPSECRET", ModeDefault, []string{"read_file(secrets/**)"}, Ask, CheckReadsBeyond},
		{"grep -rn TOPSECRET .", ModePlan, []string{"read_file(secrets/**)"}, Ask, CheckReadsBeyond},
		{"git grep TOPSECRET", ModeDefault, []string{"read_file(secrets/**)"}, Ask, CheckReadsBeyond},
		{"find . -type f -exec cat {} +", ModeDefault, []string{"read_file(secrets/**)"}, Ask, CheckReadsBeyond},
		{"grep -rn TOPSECRET src", ModeDefault, []string{"read_file(secrets/**)"}, Allow, ""},
		{"rg -n TOPSECRET", ModeDefault, nil, Allow, ""},
		{"cat README.md", ModeDefault, []string{"read_file(secrets/**)"}, Allow, ""},
		{"echo secrets/k", ModeDefault, []string{"read_file(secrets/**)"}, Allow, ""},
		{"rg -n x", ModeDefault, []string{"read_file(**/.env)"}, Ask, CheckReadsBeyond},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode)+"/"+tt.cmd, func(t *testing.T) {
			t.Parallel()
			d := deny(tt.mode, tt.rules...).Decide(commandRequest(tt.cmd))
			if d.Action != tt.want || tt.check != "" && d.Source.Check != tt.check {
				t.Errorf("%s: %s (%s) %q; want %s %s", tt.cmd, d.Action, d.Source, d.Reason, tt.want, tt.check)
			}
		})
	}
}

func TestReadsOutsideTheWorkspaceAsk(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cmd  string
		want expect // default, acceptEdits, plan, bypass
	}{
		{"cat /etc/passwd", expect{Ask, Ask, Ask, Allow}},
		{"ls /", expect{Ask, Ask, Ask, Allow}},
		{"cd /etc && ls", expect{Ask, Ask, Ask, Allow}},
		{"cat < /etc/hosts", expect{Ask, Ask, Ask, Allow}},
		{"git -C /tmp/other log", expect{Ask, Ask, Ask, Allow}},
		{"cat $F", expect{Ask, Ask, Ask, Allow}},
		{"git ls-files | xargs wc -l", expect{Ask, Ask, Ask, Allow}},
		{"rg -L foo", expect{Ask, Ask, Ask, Allow}},
		{"grep -R foo .", expect{Ask, Ask, Ask, Allow}},
		{"cat ../other/file", expect{Ask, Ask, Ask, Allow}},
		{"cat README.md > /dev/null", allowAll},
		{"echo /etc/passwd", allowAll},
		{"test -f /etc/passwd && echo yes", allowAll},
		{"grep -rn foo src", allowAll},
		// The secret stores are denied in every mode.
		{"cat ~/.ssh/id_rsa", denyAll},
		{"cat $HOME/.aws/credentials", denyAll},
		{"cd ~/.ssh && cat id_ed25519", denyAll},
		{"ls ~/.gnupg", denyAll},
		{"cat ~/.config/gh/hosts.yml", denyAll},
		{"cat ~/.docker/config.json", denyAll},
		{"cat ~/.netrc", denyAll},
		{"cp ~/.ssh/id_rsa /tmp/k", denyAll},
		{"echo key >> ~/.ssh/authorized_keys", denyAll},
		{"tar czf /tmp/k.tgz ~/.ssh", denyAll},
	}
	for _, tt := range tests {
		for i, mode := range modeOrder {
			t.Run(mode.String()+"/"+tt.cmd, func(t *testing.T) {
				t.Parallel()
				d := (&Policy{}).WithMode(mode).Decide(commandRequest(tt.cmd))
				if d.Action != tt.want[i] {
					t.Errorf("Decide(%q) in %s = %s (%s) %q, want %s", tt.cmd, mode, d.Action, d.Source, d.Reason, tt.want[i])
				}
			})
		}
	}
	d := (&Policy{}).Decide(commandRequest("cat /etc/hosts"))
	if d.Suggest != "run_command(cat /etc/hosts)" || !strings.Contains(d.Reason, "outside the workspace") {
		t.Errorf("suggest %q, reason %q", d.Suggest, d.Reason)
	}
}

func TestSecretStores(t *testing.T) {
	t.Parallel()
	const appHome = "/home/u/.mx-claw"
	base, err := NewPolicy(Options{AppHome: appHome})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"~/.ssh/id_rsa", "~/.aws/credentials", appHome + "/secrets.json", appHome + "/secrets.key",
		appHome + "/mx-claw.db", appHome + "/config.json"} {
		for _, tool := range []string{"read_file", "list_dir", "grep", "write_file"} {
			req := fileRequest(tool, "read", path)
			if tool == "write_file" {
				req.Risk = "write"
			}
			for _, mode := range modeOrder {
				if d := base.WithMode(mode).Decide(req); d.Action != Deny || d.Source.Check != CheckSecretStore {
					t.Errorf("%s %s in %s: %s (%s)", tool, path, mode, d.Action, d.Source)
				}
			}
		}
		if d := base.Decide(commandRequest("cat " + path)); d.Action != Deny {
			t.Errorf("cat %s: %s", path, d.Action)
		}
	}
	if d := base.Decide(fileRequest("read_file", "read", appHome+"/AGENTS.md")); d.Action != Allow {
		t.Errorf("the home's AGENTS.md: %s %q", d.Action, d.Reason)
	}

	// An allow rule that names the store lifts the hard check; one that
	// merely covers it does not.
	named, err := base.WithGrants(Grant{Rule: "read_file(~/.ssh/id_ed25519.pub)", Origin: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if d := named.Decide(fileRequest("read_file", "read", "~/.ssh/id_ed25519.pub")); d.Action != Allow {
		t.Errorf("named store: %s (%s) %q", d.Action, d.Source, d.Reason)
	}
	if d := named.Decide(commandRequest("cat ~/.ssh/id_ed25519.pub")); d.Action != Ask || d.Source.Check != CheckReadsBeyond {
		t.Errorf("cat of a named store file: %s (%s), want the ordinary ask for a read outside", d.Action, d.Source)
	}
	if d := named.Decide(fileRequest("read_file", "read", "~/.ssh/id_rsa")); d.Action != Deny {
		t.Errorf("another key of the named store: %s", d.Action)
	}
	broad, _ := base.WithGrants(Grant{Rule: "read_file(~/**)", Origin: "test"}, Grant{Rule: "read_file", Origin: "test"})
	if d := broad.Decide(fileRequest("read_file", "read", "~/.ssh/id_rsa")); d.Action != Deny {
		t.Errorf("a broad allow rule lifted the store: %s", d.Action)
	}
	cmdRule, _ := base.WithGrants(Grant{Rule: "run_command(ssh-keygen -y -f ~/.ssh/id_rsa)", Origin: "test"})
	if d := cmdRule.Decide(commandRequest("ssh-keygen -y -f ~/.ssh/id_rsa")); d.Action != Allow {
		t.Errorf("a run_command rule naming the store: %s %q", d.Action, d.Reason)
	}
}

func TestReadDenied(t *testing.T) {
	t.Parallel()
	s := &Settings{Path: "u", Deny: []Rule{MustParseRule("read_file(secrets/**)"), MustParseRule("grep(*.log)")}}
	p, err := NewPolicy(Options{User: s})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		tool, path string
		want       bool
	}{
		{"grep", testWS + "/secrets/k", true},
		{"glob", testWS + "/secrets", true},
		{"list_dir", testWS + "/secrets/a/b", true},
		{"grep", testWS + "/src/main.go", false},
		{"grep", testWS + "/x.log", true},
		{"glob", testWS + "/x.log", false},
		{"list_dir", testHome + "/.ssh", true},
		{"list_dir", testHome + "/.sshx", false},
	} {
		if got := p.ReadDenied(tt.tool, tt.path, testWS, testHome); got != tt.want {
			t.Errorf("ReadDenied(%s, %s) = %v", tt.tool, tt.path, got)
		}
	}
}

func TestRipgrepFlagsThatRunPrograms(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{
		"rg --pre cat foo", "rg --pre=./x foo", "rg --pre-glob '*.gz' foo", "rg --hostname-bin=./h foo",
		"rg --hostname-bin ./h foo", "rg -z foo", "rg --search-zip foo", "rg -nz foo", "rg -zn foo", "rg -inz foo",
	} {
		if d := (&Policy{}).Decide(commandRequest(cmd)); d.Action != Ask {
			t.Errorf("%s: %s %q, want ask", cmd, d.Action, d.Reason)
		}
	}
	for _, cmd := range []string{"rg -n foo src", "rg -e z src", "rg -ez src", "rg -g '*.gz' foo src", "rg -- -z src", "rg --no-search-zip foo src"} {
		if d := (&Policy{}).Decide(commandRequest(cmd)); d.Action != Allow {
			t.Errorf("%s: %s %q, want allow", cmd, d.Action, d.Reason)
		}
	}
}

func TestKnownWritersNameProtectedFiles(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"tee -a .bashrc", "cp /tmp/x .envrc", "sed -i s/a/b/ .vscode/tasks.json"} {
		d := (&Policy{}).WithMode(ModeAcceptEdits).Decide(commandRequest(cmd))
		if d.Action != Ask || !strings.Contains(d.Reason, "which is protected: it is") {
			t.Errorf("%s: %s %q; want an ask naming the protected file", cmd, d.Action, d.Reason)
		}
	}
}

// BenchmarkReadDenied is the cost grep, glob and list_dir pay per file
// they meet: one deny rule, the secret stores of a home and an mx-claw
// home.
func BenchmarkReadDenied(b *testing.B) {
	s := &Settings{Path: "u", Deny: []Rule{MustParseRule("read_file(secrets/**)")}}
	p, err := NewPolicy(Options{User: s, AppHome: testHome + "/.mx-claw"})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		p.ReadDenied("grep", testWS+"/src/internal/pkg/file.go", testWS, testHome)
	}
}
