package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
)

// The end-to-end tests of issue 18: what a new user hit in the terminal.

// TestRunMaxTimeStopsHangingRequest gives a run --max-time 2s against a
// provider that sends part of an answer and goes silent: the run stops at
// the deadline with exit 3, the request in flight cancelled.
func TestRunMaxTimeStopsHangingRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Reply{Text: "half an answer", Hang: true, Pieces: 3})
	start := time.Now()
	r := e.run("", "run", "--max-time", "2s", "say something")
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("run took %v with --max-time 2s", took)
	}
	if r.code != 3 || !strings.Contains(r.stderr, "Budget spent: time") {
		t.Errorf("exit %d, stderr %q; want 3 and the time budget named", r.code, r.stderr)
	}
}

// TestRunStalledStreamRetried has the provider go silent mid-answer with
// streamIdleTimeout 1s: the request is sent again and the run ends with
// the second answer.
func TestRunStalledStreamRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Reply{Text: "half an answer", Hang: true, Pieces: 3}, llmtest.Text("the whole answer"))
	cfg := strings.Replace(e.readHome("config.json"), `"version":1,`, `"version":1,"streamIdleTimeout":"1s",`, 1)
	e.writeHome("config.json", cfg)
	r := e.run("", "run", "say something")
	if r.code != 0 || !strings.Contains(r.stdout, "the whole answer") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "sent nothing for 1s in the middle of its answer") {
		t.Errorf("stderr does not tell of the stall:\n%s", r.stderr)
	}
	if n := len(e.srv.ChatRequests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

// readHome returns a file of the home directory.
func (e *env) readHome(name string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.home, name))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// TestAlwaysGrantInLocalSettings approves a command "always" in the REPL:
// the rule is written to .mx-claw/settings.local.json (kept out of git),
// `permissions test` and `permissions list` show it, and removing it from
// the file revokes it.
func TestAlwaysGrantInLocalSettings(t *testing.T) {
	e := newEnv(t, llmtest.Call("run_command", `{"command":"touch made.txt"}`), llmtest.Text("made it"))
	p := e.startTUI()
	p.typeLine("make the file")
	p.waitFor("[a] always", 20*time.Second)
	p.keys("a")
	p.waitFor("made it", 20*time.Second)
	p.keys("C-d")
	p.waitFor("EXITED=0", 10*time.Second)

	local := filepath.Join(e.ws, ".mx-claw", "settings.local.json")
	data, err := os.ReadFile(local)
	if err != nil || !strings.Contains(string(data), `"run_command(touch made.txt)"`) {
		t.Fatalf("settings.local.json = %q, %v", data, err)
	}
	if ig, _ := os.ReadFile(filepath.Join(e.ws, ".mx-claw", ".gitignore")); !strings.Contains(string(ig), "settings.local.json") {
		t.Errorf(".mx-claw/.gitignore = %q", ig)
	}
	r := e.run("", "permissions", "test", "touch made.txt")
	if r.code != 0 || !strings.Contains(r.stdout, "allow") || !strings.Contains(r.stdout, "settings.local.json") {
		t.Errorf("permissions test: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = e.run("", "permissions", "list")
	if r.code != 0 || !strings.Contains(r.stdout, "run_command(touch made.txt)") || !strings.Contains(r.stdout, local) {
		t.Errorf("permissions list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	e.writeWS(".mx-claw/settings.local.json", `{"permissions":{"allow":[]}}`)
	r = e.run("", "permissions", "test", "touch made.txt")
	if !strings.Contains(r.stdout, "ask") {
		t.Errorf("after removing the rule, permissions test says:\n%s", r.stdout)
	}
}

// TestLocalSettingsOfUntrustedCloneDoNotGrant: a repository that ships a
// settings.local.json allowing a command gets nothing from it until the
// workspace is trusted.
func TestLocalSettingsOfUntrustedCloneDoNotGrant(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.writeWS(".mx-claw/settings.local.json", `{"permissions":{"allow":["run_command(curl:*)"]}}`)
	r := e.run("", "permissions", "test", "curl evil.example")
	if strings.Contains(r.stdout, "allow") && !strings.Contains(r.stdout, "ask") {
		t.Errorf("an untrusted local file granted a command:\n%s", r.stdout)
	}
	r = e.run("", "permissions", "list")
	if !strings.Contains(r.stdout, "not applied: permissions.allow: run_command(curl:*)") {
		t.Errorf("permissions list does not show the rule as not applied:\n%s", r.stdout)
	}
}

// TestBadSettingsReportedAtStartNoEmptySession: a malformed project
// settings file stops `run` and the REPL at start, naming the file, and
// leaves no session behind.
func TestBadSettingsReportedAtStartNoEmptySession(t *testing.T) {
	e := newEnv(t, llmtest.Text("never asked"))
	e.writeWS(".mx-claw/settings.json", `{"permissions": {"deny": ["run_command(go test"]}}`)
	r := e.run("", "run", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "settings.json") || !strings.Contains(r.stderr, "permissions.deny[0]") {
		t.Errorf("run: exit %d, stderr %q; want 2 naming the file and entry", r.code, r.stderr)
	}
	if l := e.run("", "sessions", "list", "--json"); strings.TrimSpace(l.stdout) != "[]" {
		t.Errorf("sessions after the failed run: %s", l.stdout)
	}
	p := e.startTUIWaiting("EXITED=")
	s := p.screen()
	if !strings.Contains(s, "EXITED=2") || !strings.Contains(s, "permissions.deny[0]") {
		t.Errorf("the REPL did not stop at start naming the entry:\n%s", s)
	}
	if l := e.run("", "sessions", "list", "--json"); strings.TrimSpace(l.stdout) != "[]" {
		t.Errorf("sessions after the REPL refused: %s", l.stdout)
	}
	if n := len(e.srv.ChatRequests()); n != 0 {
		t.Errorf("%d model requests", n)
	}
}

// TestVersionFlag: `mx-claw --version` prints the version, as the version
// subcommand does.
func TestVersionFlag(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	flag, sub := e.run("", "--version"), e.run("", "version")
	if flag.code != 0 || !strings.HasPrefix(flag.stdout, "mx-claw ") || flag.stdout != sub.stdout {
		t.Errorf("--version: exit %d %q; version: %q", flag.code, flag.stdout, sub.stdout)
	}
}

// TestRunHelpOnAskValue: run --help shows --on-ask with a plain value
// name, not a command quoted in its description.
func TestRunHelpOnAskValue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.run("", "run", "--help")
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.Contains(l, "--on-ask") && strings.Contains(l, "--on-ask mx-claw") {
			t.Errorf("help line: %q", l)
		}
	}
	if !strings.Contains(r.stdout, "--on-ask string") {
		t.Errorf("help lacks `--on-ask string`:\n%s", r.stdout)
	}
}

// TestCutStreamEndsItsLine: an answer cut mid-stream ends its line on
// stdout, so the error and session lines that follow start on their own.
func TestCutStreamEndsItsLine(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Reply{SSE: `data: {"choices":[{"index":0,"delta":{"content":"partial text"}}]}` + "\n\n"})
	r := e.run("", "run", "hi")
	if r.code != 1 || r.stdout != "partial text\n" || !strings.Contains(r.stderr, "Session: ") {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestProviderErrorsSayWhatToDo: a refused key names the command that
// sets it; a server that does not answer names its URL and doctor.
func TestProviderErrorsSayWhatToDo(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Reply{Status: 401, Body: `{"error":{"message":"Incorrect API key provided"}}`})
	r := e.run("", "run", "hi")
	if r.code != 1 || !strings.Contains(r.stderr, "mx-claw model set fake api-key") {
		t.Errorf("401: exit %d, stderr %q", r.code, r.stderr)
	}

	down := newEnv(t)
	url := down.srv.URL()
	down.srv.Close()
	r = down.run("", "run", "hi")
	if !strings.Contains(r.stderr, "is not answering") || !strings.Contains(r.stderr, "mx-claw doctor") || !strings.Contains(r.stderr, url) {
		t.Errorf("server down: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestStartInHomeWarnsFirst: the REPL asks before it starts in the home
// directory (n: it does not start), and run warns.
func TestStartInHomeWarnsFirst(t *testing.T) {
	e := newEnv(t, llmtest.Text("ok"))
	r := e.run("", "run", "--cwd", e.home, "hi")
	if r.code != 0 || !strings.Contains(r.stderr, "Warning: the workspace is your home directory") {
		t.Errorf("run in home: exit %d, stderr %q", r.code, r.stderr)
	}
	home := *e
	home.ws = e.home
	p := home.startTUIWaiting("Start here anyway?")
	p.typeLine("n")
	s := p.waitFor("EXITED=", 10*time.Second)
	if !strings.Contains(s, "EXITED=2") || !strings.Contains(s, "not started in your home directory") {
		t.Errorf("screen:\n%s", s)
	}
}

// TestMakeInstallSaysWhatItDoes runs `make install` into a temporary
// GOBIN: it says where the binary goes, that a first build takes a while,
// and that the directory is not on PATH. It installs without -trimpath
// (INSTALL_FLAGS=): a -trimpath build shares no compiled package with
// this test binary's, so on a fresh build cache it compiled the whole
// module a second time (minutes on a small machine); without it, go
// install reuses what `go test` compiled and only links.
func TestMakeInstallSaysWhatItDoes(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed; skipping the make install test")
	}
	t.Parallel()
	gobin := t.TempDir()
	cmd := exec.Command("make", "-s", "install", "GOBIN="+gobin, "INSTALL_FLAGS=")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	for _, want := range []string{"installing it into " + gobin, "first build downloads", "Installed " + gobin + "/mx-claw", "not on your PATH"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("make install does not say %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(gobin, "mx-claw")); err != nil {
		t.Error(err)
	}
}
