package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store/postgres/pgtest"
)

// pgCluster is the throwaway PostgreSQL cluster of these tests, started by
// the first test that needs one and stopped by TestMain.
var pgCluster pgtest.Lazy

// useStore makes e's mx-claw use the store url through the config's
// "store" key.
func (e *env) useStore(url string) {
	e.t.Helper()
	path := e.home + "/config.json"
	b, err := os.ReadFile(path)
	if err != nil {
		e.t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		e.t.Fatal(err)
	}
	cfg["store"] = url
	b, _ = json.Marshal(cfg)
	e.writeHome("config.json", string(b))
}

// TestPostgresStoreEndToEnd: with the config's "store" set to a postgres://
// URL, `mx-claw run` keeps its session in PostgreSQL (the home's SQLite
// file does not have it), `sessions show` reads it back, MX_CLAW_STORE
// chooses the store in place of the config, `doctor` says which store is in
// use, and a password in config.json is refused.
func TestPostgresStoreEndToEnd(t *testing.T) {
	t.Parallel()
	url := pgCluster.NewDB(t)
	e := newEnv(t, llmtest.Text("stored in postgres"))
	e.useStore(url)
	r := e.run("", "run", "--json", "hello")
	if r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events(t))
	d := e.show(id)
	if len(d.Messages) == 0 || d.Messages[len(d.Messages)-1].Content != "stored in postgres" {
		t.Fatalf("sessions show: %+v", d.Messages)
	}
	if r := e.run("", "doctor"); r.code != 0 || !strings.Contains(r.stdout, "PostgreSQL "+url+" (config) (reachable)") {
		t.Errorf("doctor: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}

	// The same home on SQLite does not know the session.
	e.useStore("sqlite")
	if r := e.run("", "sessions", "show", id); r.code == 0 {
		t.Errorf("the session is in the SQLite file too:\n%s", r.stdout)
	}
	// MX_CLAW_STORE chooses PostgreSQL again, over the config.
	withEnv := []string{"MX_CLAW_STORE=" + url}
	if r := e.runEnv("", withEnv, "sessions", "show", id, "--json"); r.code != 0 || !strings.Contains(r.stdout, "stored in postgres") {
		t.Errorf("sessions show with MX_CLAW_STORE: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if r := e.runEnv("", withEnv, "doctor"); !strings.Contains(r.stdout, "(MX_CLAW_STORE) (reachable)") {
		t.Errorf("doctor with MX_CLAW_STORE:\n%s", r.stdout)
	}
	if r := e.runEnv("", []string{"MX_CLAW_STORE=mysql://x"}, "sessions", "list"); r.code != 2 || !strings.Contains(r.stderr, "MX_CLAW_STORE") {
		t.Errorf("a bad MX_CLAW_STORE: exit %d: %s", r.code, r.stderr)
	}

	// A password in config.json is refused, and not echoed.
	e.useStore(strings.Replace(url, "postgres@", "postgres:hunter2@", 1))
	r = e.run("", "run", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "PGPASSWORD") || strings.Contains(r.stderr+r.stdout, "hunter2") {
		t.Errorf("run with a password in config.json: exit %d: %s", r.code, r.stderr)
	}
}

// TestPostgresTimeTravelAndSearch: on the PostgreSQL store, the file
// changes of a turn are recorded and undone, a rewind takes the
// conversation back, `sessions search` finds messages (not in another
// workspace), a second import of the same export is recognised, and
// `sessions rm` deletes a session, its search hits with it.
func TestPostgresTimeTravelAndSearch(t *testing.T) {
	t.Parallel()
	url := pgCluster.NewDB(t)
	e := newEnv(t,
		llmtest.Call("write_file", `{"path":"one.txt","content":"1"}`), llmtest.Text("wrote one"),
		llmtest.Call("write_file", `{"path":"two.txt","content":"2"}`), llmtest.Text("wrote the quokka file"),
	)
	e.useStore(url)
	id := sessionOf(t, e.runExpect(0, "", "run", "--yolo", "--json", "message one").events(t))
	e.runExpect(0, "", "run", "--yolo", "--continue", "message two")

	if out := e.runExpect(0, "", "undo").stdout; !strings.Contains(out, "Restored:\n  two.txt") ||
		e.wsFile("two.txt") != "<missing>" || e.wsFile("one.txt") != "1" {
		t.Errorf("undo:\n%s\none.txt %q, two.txt %q", out, e.wsFile("one.txt"), e.wsFile("two.txt"))
	}
	seqs := e.userSeqs(id)
	if len(seqs) != 2 {
		t.Fatalf("user messages at %v", seqs)
	}
	e.runExpect(0, "", "rewind", "--session", id, "--to", strconv.FormatInt(seqs[0], 10))
	if e.wsFile("one.txt") != "<missing>" {
		t.Errorf("one.txt after the rewind: %q", e.wsFile("one.txt"))
	}
	if show := e.runExpect(0, "", "sessions", "show", id).stdout; !strings.Contains(show, "taken back by a rewind") {
		t.Errorf("sessions show does not mark rewound messages:\n%s", show)
	}

	var hits []protocol.SearchHit
	out := e.runExpect(0, "", "sessions", "search", "quokka", "--json").stdout
	if err := json.Unmarshal([]byte(out), &hits); err != nil || len(hits) != 1 || hits[0].SessionID != id ||
		!strings.Contains(hits[0].Snippet, "**quokka**") {
		t.Errorf("search: %v %s", err, out)
	}
	if out := e.runExpect(0, "", "sessions", "search", "quokka", "--workspace", e.home).stdout; !strings.Contains(out, "No matches.") {
		t.Errorf("search in another workspace: %s", out)
	}

	file := filepath.Join(e.home, "export.jsonl")
	e.runExpect(0, "", "sessions", "export", id, "-o", file)
	if out := e.runExpect(0, "", "import", "mx-claw", file).stdout; !strings.Contains(out, "imported ") {
		t.Errorf("import: %s", out)
	}
	if out := e.runExpect(0, "", "import", "mx-claw", file).stdout; !strings.Contains(out, "imported before") {
		t.Errorf("second import: %s", out)
	}

	if out := e.runExpect(0, "", "sessions", "rm", id).stdout; !strings.Contains(out, "Deleted "+id) {
		t.Errorf("rm: %s", out)
	}
	out = e.runExpect(0, "", "sessions", "search", "quokka", "--json").stdout
	if err := json.Unmarshal([]byte(out), &hits); err != nil || len(hits) != 1 || hits[0].SessionID == id {
		t.Errorf("search after rm (only the imported copy): %v %s", err, out)
	}
}
