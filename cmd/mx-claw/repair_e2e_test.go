package main_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// execDB runs statements on the home's real database file, as a damaged
// disk or a hand edit would change it.
func (e *env) execDB(stmts ...string) {
	e.t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(e.home, "mx-claw.db"))
	if err != nil {
		e.t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			e.t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestCorruptMessageRowDoesNotBrickSession: a message row with bad JSON in
// the SQLite file is set aside with a warning, the session goes on (the
// model sees the rest), and `doctor --repair` reports it, saves it to a
// file and stops the warnings.
func TestCorruptMessageRowDoesNotBrickSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Text("the first answer"), llmtest.Text("the second answer"), llmtest.Text("the third answer"))
	r := e.run("", "run", "--json", "first question")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events(t))
	// Messages: 1 system, 2 user, 3 assistant. Damage the answer.
	e.execDB(`UPDATE messages SET content = '{"role":"assistant","content":"the fir' WHERE seq = 3`)

	r2 := e.run("", "run", "--continue", "second question")
	if r2.code != 0 || !strings.Contains(r2.stdout, "the second answer") {
		t.Fatalf("the session is not usable after one bad row: exit %d\nstdout %q\nstderr %q", r2.code, r2.stdout, r2.stderr)
	}
	if !strings.Contains(r2.stderr, "message 3") || !strings.Contains(r2.stderr, "doctor --repair") {
		t.Errorf("no warning names the bad record: %q", r2.stderr)
	}
	reqs := e.srv.ChatRequests()
	for _, m := range reqs[1].Chat.Messages {
		if strings.Contains(m.Content, "the fir") {
			t.Errorf("the damaged message reached the model: %+v", m)
		}
	}
	show := e.run("", "sessions", "show", id, "--json")
	if show.code != 0 {
		t.Fatalf("sessions show: exit %d: %s", show.code, show.stderr)
	}

	rep := e.run("", "doctor", "--repair")
	if rep.code != 0 || !strings.Contains(rep.stdout, "message 3 of session "+id) {
		t.Fatalf("doctor --repair: exit %d\n%s%s", rep.code, rep.stdout, rep.stderr)
	}
	saved, _ := filepath.Glob(filepath.Join(e.home, "quarantine", id, "messages-3-*.json"))
	if len(saved) != 1 {
		t.Fatalf("saved files %v", saved)
	}
	if data, _ := os.ReadFile(saved[0]); string(data) != `{"role":"assistant","content":"the fir` {
		t.Errorf("the saved record is %q, not the row as it was", data)
	}
	r3 := e.run("", "run", "--continue", "--json", "third question")
	if r3.code != 0 || strings.Contains(r3.stdout, "set aside") {
		t.Errorf("after the repair: exit %d, still warns: %s", r3.code, r3.stderr)
	}
	var quarantined protocol.Event
	for _, ev := range r3.events(t) {
		if ev.Type == protocol.EventWarning {
			quarantined = ev
		}
	}
	if quarantined.Text != "" {
		t.Errorf("warning after the repair: %q", quarantined.Text)
	}
	again := e.run("", "doctor", "--repair")
	if again.code != 0 || !strings.Contains(again.stdout, "none (every record decodes)") {
		t.Errorf("second repair: exit %d\n%s", again.code, again.stdout)
	}
}

// eventTypes reads the types of a session's stored events from the
// database file.
func (e *env) eventTypes(id string) []string {
	e.t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(e.home, "mx-claw.db")+"?mode=ro")
	if err != nil {
		e.t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT type FROM events WHERE session_id = ? ORDER BY sequence`, id)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var typ string
		rows.Scan(&typ)
		out = append(out, typ)
	}
	return out
}

// mountSmallHome moves the env's home onto a tmpfs of size bytes (root
// only; the test is skipped otherwise) and returns a function that fills
// it up.
func (e *env) mountSmallHome(size int) (fill func()) {
	e.t.Helper()
	dir := filepath.Join(e.t.TempDir(), "home")
	if err := os.Mkdir(dir, 0o700); err != nil {
		e.t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d,mode=0700", size), "tmpfs", dir).CombinedOutput(); err != nil {
		e.t.Skipf("needs root to mount a small tmpfs as a full disk: mount: %v: %s", err, out)
	}
	e.t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			e.t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	cfg, err := os.ReadFile(filepath.Join(e.home, "config.json"))
	if err != nil {
		e.t.Fatal(err)
	}
	e.home = dir
	e.writeHome("config.json", string(cfg))
	return func() {
		f, err := os.Create(filepath.Join(dir, "filler"))
		if err != nil {
			e.t.Fatal(err)
		}
		defer f.Close()
		chunk := make([]byte, 64<<10)
		for {
			if _, err := f.Write(chunk); err != nil {
				return // ENOSPC: the disk is full
			}
		}
	}
}

// TestDiskFullDoesNotLeaveSessionRunning: when the disk fills up in the
// middle of a turn, the turn cannot store its answer nor its end; the next
// start (once there is room again) records the turn as failed, with a
// turn.failed event, instead of leaving the session running for ever.
// The full disk is a real one: a small tmpfs holding the home.
func TestDiskFullDoesNotLeaveSessionRunning(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Reply{Text: strings.Repeat("a long answer that needs room. ", 20000), Pieces: 40, ChunkDelay: 50 * time.Millisecond},
		llmtest.Text("there is room again"))
	fill := e.mountSmallHome(16 << 20)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, ch, errb := e.startJSON(ctx, "write a lot")
	ev := waitFor(t, ch, protocol.EventMessageDelta)
	fill()
	for range ch {
	}
	code := exitCode(cmd.Wait())
	t.Logf("exit %d: %s", code, errb)
	if code == 0 {
		t.Fatal("the turn succeeded on a full disk")
	}
	os.Remove(filepath.Join(e.home, "filler"))

	d := e.show(ev.SessionID)
	if d.Session.Status != protocol.StatusFailed || !strings.Contains(d.Session.LastError, "interrupted") {
		t.Errorf("after the disk filled up: status %s, error %q; want failed", d.Session.Status, d.Session.LastError)
	}
	types := e.eventTypes(ev.SessionID)
	if n := len(types); n == 0 || types[n-1] != string(protocol.EventTurnFailed) {
		t.Errorf("events %v; want a turn.failed at the end", types)
	}
	if r := e.run("", "run", "--continue", "go on"); r.code != 0 || !strings.Contains(r.stdout, "there is room again") {
		t.Errorf("next turn: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
}

// deadPID returns the pid of a process that has ended.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestStaleTempFilesCleanedOnNextStart: the temporary files a killed
// process left (a config save, a secrets and a key save in the home, an
// atomic write in the workspace listed in its journal) are removed when
// mx-claw next starts; those a live process may still be writing are kept.
func TestStaleTempFilesCleanedOnNextStart(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Text("ok"))
	dead := deadPID(t)
	old := time.Now().Add(-2 * time.Minute)
	stale := []string{
		filepath.Join(e.home, fmt.Sprintf(".config-pid%d-4242.json", dead)),
		filepath.Join(e.home, ".config-1234.json"), // an older mx-claw's name, two minutes old
		filepath.Join(e.home, ".secrets-777.tmp"),
		filepath.Join(e.home, ".secrets-key-778.tmp"),
		filepath.Join(e.ws, "src", ".main.go.tmp-k3x9"),
	}
	kept := []string{
		filepath.Join(e.home, fmt.Sprintf(".config-pid%d-1.json", os.Getpid())), // a live process's save
		filepath.Join(e.home, ".config-99.json"),                                // too fresh to tell
		filepath.Join(e.ws, "src", ".other.go.tmp-zz1"),                         // not in a journal
	}
	for _, p := range append(append([]string{}, stale...), kept...) {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("half written"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.Chtimes(stale[1], old, old)
	os.MkdirAll(filepath.Join(e.home, "tmp"), 0o700)
	e.writeHome(fmt.Sprintf("tmp/%d.list", dead), stale[4]+"\n")

	if r := e.run("", "run", "hello"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, p := range stale {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("stale %s was not removed", p)
		}
	}
	for _, p := range kept {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(e.home, "tmp", fmt.Sprintf("%d.list", dead))); err == nil {
		t.Error("the dead process's journal was kept")
	}
}

// TestDeviceReadsAsk: `cat /dev/zero` and a read of a named pipe in the
// workspace are not auto-allowed as read-only commands: in default mode
// with nobody to ask they are refused, and nothing runs.
func TestDeviceReadsAsk(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "zero", Name: "run_command", Arguments: `{"command":"cat /dev/zero","timeout":3}`},
			{ID: "pipe", Name: "run_command", Arguments: `{"command":"wc -c < pipe","timeout":3}`},
			{ID: "null", Name: "run_command", Arguments: `{"command":"cat /dev/null && echo empty"}`},
		}},
		llmtest.Text("ok"))
	if err := syscall.Mkfifo(filepath.Join(e.ws, "pipe"), 0o600); err != nil {
		t.Skipf("cannot make a named pipe: %v", err)
	}
	start := time.Now()
	r := e.run("", "run", "read devices")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	res := toolResults(e.srv.ChatRequests()[1])
	for _, id := range []string{"zero", "pipe"} {
		if !strings.Contains(res[id], "needs the user's approval") || !strings.Contains(res[id], "may never end") {
			t.Errorf("result of %s = %.300q; want a refusal saying why", id, res[id])
		}
	}
	if !strings.Contains(res["null"], "empty") {
		t.Errorf("cat /dev/null was not run: %q", res["null"])
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v: a device read ran", d)
	}
}

// TestTrustBoundToFolderIdentity: trust given to a repository is not
// inherited by a different repository cloned at the same path later: its
// allow rule does not apply until it is trusted itself.
func TestTrustBoundToFolderIdentity(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git to make the repositories")
	}
	e := newEnv(t)
	e.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		if len(toolResults(*req)) > 0 {
			return llmtest.Text("done")
		}
		return llmtest.Call("run_command", `{"command":"touch project-allowed"}`)
	})
	makeRepo := func() {
		if err := os.RemoveAll(e.ws); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(e.ws, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("git", "init", "-q", e.ws).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v: %s", err, out)
		}
		e.writeWS(".mx-claw/settings.json", `{"permissions":{"allow":["run_command(touch:*)"]}}`)
	}
	allowed := func() bool {
		_, err := os.Stat(filepath.Join(e.ws, "project-allowed"))
		os.Remove(filepath.Join(e.ws, "project-allowed"))
		return err == nil
	}

	makeRepo()
	if r := e.run("", "run", "--trust", "trusted"); r.code != 0 || !allowed() {
		t.Fatalf("the trusted repository's rule did not apply: exit %d: %s", r.code, r.stderr)
	}
	if r := e.run("", "run", "again"); r.code != 0 || !allowed() {
		t.Fatalf("the same repository lost its trust: exit %d: %s", r.code, r.stderr)
	}
	// Another repository cloned at the same path.
	makeRepo()
	if r := e.run("", "run", "a stranger"); r.code != 0 || allowed() {
		t.Fatalf("a different repository at the trusted path was trusted: exit %d: %s", r.code, r.stderr)
	}
	if r := e.run("", "run", "--trust", "trusted now"); r.code != 0 || !allowed() {
		t.Fatalf("trusting the new repository: exit %d: %s", r.code, r.stderr)
	}
}
