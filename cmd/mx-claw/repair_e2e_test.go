package main_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
