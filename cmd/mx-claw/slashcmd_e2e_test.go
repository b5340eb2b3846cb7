package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
)

// commitCommand is a command file in the shape of Claude Code's commit
// commands: git allowed-tools, !`git …` context lines, a file reference.
const commitCommand = `---
allowed-tools: Bash(git add:*), Bash(git status:*), Bash(git commit:*), Bash(env)
description: Commit the work in progress
---

## Context

- Status: !` + "`git status --short`" + `
- Branch: !` + "`git branch --show-current`" + `
- Missing: !` + "`ls no-such-file`" + `
- Environment: !` + "`env`" + `
- Guide: @docs/COMMITS.md

Write the message the way the guide says, then commit. Sign it
"Co-Authored-By: mx-claw <noreply@example.com>"; the fence below is an
example only:

` + "```" + `
!` + "`touch fenced.txt`" + `
` + "```" + `
`

func gitInit(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for _, args := range [][]string{{"init", "-q", "-b", "trunk"}, {"add", "-A"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// `mx-claw run /commit` runs the command's !`…` lines before the request
// and sends their output in their place (with the exit code of the one
// that failed), with the file @docs/COMMITS.md attached as the REPL's
// @mentions attach files; nothing in a fence runs, and the commands do
// not see mx-claw's secrets.
func TestCustomCommandShellLinesAndFiles(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Text("committed"))
	e.writeHomeFile("commands/commit.md", commitCommand)
	e.writeWS("docs/COMMITS.md", "Subject line under 50 characters.\n")
	e.writeWS("src/app.go", "package app\n")
	gitInit(t, e.ws)
	e.writeWS("src/new.go", "package app // new\n")
	cmd := e.command(context.Background(), "run", "/commit")
	cmd.Env = append(cmd.Env, "OPENAI_API_KEY=sk-not-for-commands")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run /commit: %v\n%s", err, out)
	}
	reqs := e.srv.ChatRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1", len(reqs))
	}
	got := userMessage(reqs[0])
	for _, want := range []string{
		"- Status: A  docs/COMMITS.md\nA  src/app.go\n",
		"?? src/new.go\n- Branch: trunk\n",
		"- Missing: ls: cannot access 'no-such-file': No such file or directory\n[exit code 2]\n",
		"- Guide: @docs/COMMITS.md\n",
		"<noreply@example.com>",
		"```\n!`touch fenced.txt`\n```\n",
		"\n\n<file path=\"docs/COMMITS.md\">\nSubject line under 50 characters.\n</file>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the request lacks %q:\n%s", want, got)
		}
	}
	for _, leak := range []string{"sk-not-for-commands", "MX_CLAW_HOME", "!`git status"} {
		if strings.Contains(got, leak) {
			t.Errorf("the request holds %q:\n%s", leak, got)
		}
	}
	if _, err := os.Stat(filepath.Join(e.ws, "fenced.txt")); err == nil {
		t.Error("a command in a fence ran")
	}
}

// A line that would need approval, or that a deny rule covers, refuses
// the command before any model request and before any of its lines ran;
// the message names the line and how to allow it. A missing file is an
// error too. The same command runs once allowed-tools allow the line.
func TestCustomCommandRefusedLines(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Text("made"))
	needSandbox(t, e)
	e.writeHomeFile("commands/make.md", "Made: !`touch first.txt` then !`touch second.txt`\n")
	r := e.run("", "run", "/make")
	if r.code != 2 || !strings.Contains(r.stderr, "!`touch first.txt` would need approval") ||
		!strings.Contains(r.stderr, "add Bash(touch first.txt) to the allowed-tools of "+filepath.Join(e.home, "commands", "make.md")) ||
		!strings.Contains(r.stderr, "or allow run_command(touch first.txt) in your permission settings") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	e.writeHomeFile("commands/make2.md", "---\nallowed-tools: Bash(touch first.txt)\n---\nMade: !`touch first.txt` then !`touch second.txt`\n")
	r = e.run("", "run", "/make2")
	if r.code != 2 || !strings.Contains(r.stderr, "!`touch second.txt` would need approval") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	e.writeHomeFile("commands/ref.md", "---\nallowed-tools: Bash(touch:*)\n---\n!`touch first.txt` and read @src/gone.go\n")
	r = e.run("", "run", "/ref")
	if r.code != 2 || !strings.Contains(r.stderr, "@src/gone.go: no file src/gone.go in the workspace") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	// The user's deny rule wins over the command's allowed-tools.
	e.writeHomeFile("commands/allowed.md", "---\nallowed-tools: Bash(touch:*)\n---\nMade: !`touch first.txt && touch second.txt`\n")
	e.writeHome("settings.json", `{"permissions":{"deny":["run_command(touch second.txt)"]}}`)
	r = e.run("", "run", "/allowed")
	if r.code != 2 || !strings.Contains(r.stderr, "is denied") || !strings.Contains(r.stderr, "run_command(touch second.txt)") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, f := range []string{"first.txt", "second.txt"} {
		if _, err := os.Stat(filepath.Join(e.ws, f)); err == nil {
			t.Fatalf("%s was made by a refused command", f)
		}
	}
	if n := len(e.srv.ChatRequests()); n != 0 {
		t.Fatalf("%d model requests for refused commands", n)
	}
	e.writeHome("settings.json", `{}`)
	r = e.mustRun("run", "/allowed")
	if got := userMessage(e.srv.ChatRequests()[0]); got != "Made:" {
		t.Errorf("the allowed command sent %q", got)
	}
	for _, f := range []string{"first.txt", "second.txt"} {
		if _, err := os.Stat(filepath.Join(e.ws, f)); err != nil {
			t.Errorf("the allowed line did not run: %v", err)
		}
	}
}

// Without a sandbox, an allowed-tools entry does not let a line that is
// not read-only run unasked (run_command's gate), so the command is
// refused; a read-only line still runs.
func TestCustomCommandNoSandboxGate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Text("listed"))
	e.writeHomeFile("commands/mk.md", "---\nallowed-tools: Bash(touch:*)\n---\n!`touch made.txt`\n")
	e.writeHomeFile("commands/ls.md", "Files: !`ls`\n")
	e.writeWS("a.txt", "a\n")
	run := func(name string) result {
		ctx := context.Background()
		cmd := e.command(ctx, "run", name)
		cmd.Env = append(cmd.Env, "MX_CLAW_SANDBOX_BACKEND=none")
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return result{out.String(), errb.String(), exitCode(err)}
	}
	if r := run("/mk"); r.code != 2 || !strings.Contains(r.stderr, "no command sandbox is in force") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "made.txt")); err == nil {
		t.Error("the line ran without a sandbox and without approval")
	}
	if r := run("/ls"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got := userMessage(e.srv.ChatRequests()[0]); got != "Files: a.txt" {
		t.Errorf("sent %q", got)
	}
}

// An untrusted workspace's command never loads, so its lines never run;
// trusted, it runs them.
func TestCustomCommandUntrustedNeverRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Text("one"), llmtest.Text("two"))
	e.writeWS(".claude/commands/setup.md", "---\nallowed-tools: Bash(pwd)\n---\nHere: !`pwd`\n")
	r := e.mustRun("run", "/setup")
	if !strings.Contains(r.stderr, "No custom command /setup") || userMessage(e.srv.ChatRequests()[0]) != "/setup" {
		t.Errorf("an untrusted command loaded: %q", r.stderr)
	}
	e.mustRun("run", "--trust", "/setup")
	if got := userMessage(e.srv.ChatRequests()[1]); got != "Here: "+e.ws {
		t.Errorf("the trusted command sent %q", got)
	}
}

// In the REPL a custom command's lines run and its files are attached the
// same way; a refused line is told on the screen, with no model request
// and nothing run.
func TestTUICustomCommandShellLinesAndFiles(t *testing.T) {
	e := newEnv(t, llmtest.Text("context-received"))
	e.writeHomeFile("commands/where.md", "---\ndescription: Say where we are\n---\nHere: !`pwd`; notes in @notes.txt\n")
	e.writeHomeFile("commands/mk.md", "---\ndescription: Make a file\n---\n!`touch made.txt`\n")
	e.writeWS("notes.txt", "note-marker\n")
	p := e.startTUI()
	p.typeLine("/mk")
	s := p.waitFor("would need approval", 20*time.Second)
	if !strings.Contains(s, "touch made.txt") {
		t.Errorf("the screen does not name the refused line:\n%s", s)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "made.txt")); err == nil {
		t.Error("the refused line ran")
	}
	if n := len(e.srv.ChatRequests()); n != 0 {
		t.Fatalf("%d model requests for a refused command", n)
	}
	p.typeLine("/where")
	p.waitFor("context-received", 20*time.Second)
	reqs := e.srv.ChatRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1", len(reqs))
	}
	got := userMessage(reqs[0])
	for _, want := range []string{"Here: " + e.ws + "; notes in @notes.txt", "<file path=\"notes.txt\">\nnote-marker\n</file>"} {
		if !strings.Contains(got, want) {
			t.Errorf("the request lacks %q:\n%s", want, got)
		}
	}
}
