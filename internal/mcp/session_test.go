package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/tools"
)

func sessionTools(t *testing.T, m *Manager, req SessionRequest) ([]tools.Tool, []string) {
	t.Helper()
	ts, warnings, err := m.SessionTools(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return ts, warnings
}

func names(ts []tools.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Info().Name)
	}
	return out
}

// TestSessionToolsFrozen: the first turn's list is what every later turn
// gets, in any process, whatever the configuration says by then.
func TestSessionToolsFrozen(t *testing.T) {
	t.Parallel()
	home, ws := t.TempDir(), t.TempDir()
	set := fastSettings()
	set.Startup = StartupSession
	cfg := &Config{Servers: []*Server{helperServer("helper", nil)}, Settings: set}
	m := NewManager(Options{Home: home, Environ: testEnviron})
	defer m.Close()
	first, warnings := sessionTools(t, m, SessionRequest{SessionID: "s1", Workspace: ws, First: true, Config: cfg})
	if len(first) != 6 || len(warnings) != 0 {
		t.Fatalf("first turn: %v %v", names(first), warnings)
	}
	// The schema is the server's, exactly.
	echo := first[2].(*Tool)
	var schema map[string]any
	if err := json.Unmarshal(echo.Info().Schema, &schema); err != nil || schema["type"] != "object" ||
		schema["properties"].(map[string]any)["message"].(map[string]any)["description"] != "the text to echo" {
		t.Fatalf("echo schema: %s", echo.Info().Schema)
	}
	// A later turn, in another process, with the server gone from the
	// configuration: same list; the calls say why they cannot run.
	m2 := NewManager(Options{Home: home, Environ: testEnviron})
	defer m2.Close()
	later, _ := sessionTools(t, m2, SessionRequest{SessionID: "s1", Workspace: ws, Config: &Config{Settings: set}})
	if strings.Join(names(later), ",") != strings.Join(names(first), ",") {
		t.Fatalf("later turn: %v, want %v", names(later), names(first))
	}
	_, err := later[2].Run(context.Background(), nil, json.RawMessage(`{"message":"x"}`))
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("call of a gone server: %v", err)
	}
	// A session whose first turn had no MCP servers gets none later.
	none, _ := sessionTools(t, m2, SessionRequest{SessionID: "s2", Workspace: ws, Config: cfg})
	if len(none) != 0 {
		t.Fatalf("session without a frozen list: %v", names(none))
	}
}

// TestLazyStart: in lazy mode a server whose entry was listed before is
// not started until a tool is called.
func TestLazyStart(t *testing.T) {
	t.Parallel()
	home, ws := t.TempDir(), t.TempDir()
	s := helperServer("lazy", nil)
	cfg := &Config{Servers: []*Server{s}, Settings: fastSettings()}
	m := NewManager(Options{Home: home, Environ: testEnviron})
	defer m.Close()
	// The first session lists the tools: the server starts once.
	if ts, _ := sessionTools(t, m, SessionRequest{SessionID: "a", Workspace: ws, First: true, Config: cfg}); len(ts) != 6 {
		t.Fatalf("first session: %v", names(ts))
	}
	m.Close()
	m2 := NewManager(Options{Home: home, Environ: testEnviron})
	defer m2.Close()
	ts, _ := sessionTools(t, m2, SessionRequest{SessionID: "b", Workspace: ws, First: true, Config: cfg})
	if len(ts) != 6 {
		t.Fatalf("second session: %v", names(ts))
	}
	if running, _ := m2.Running(ws, s); running {
		t.Fatal("the server started before any call")
	}
	res, err := ts[2].Run(context.Background(), nil, json.RawMessage(`{"message":"lazy"}`))
	if err != nil || res.Content != "echo: lazy" {
		t.Fatalf("first call: %+v %v", res, err)
	}
	if running, _ := m2.Running(ws, s); !running {
		t.Fatal("the call did not start the server")
	}
	// With "startup": "session" the servers start with the session, the
	// listing cache notwithstanding.
	m3 := NewManager(Options{Home: home, Environ: testEnviron})
	defer m3.Close()
	cfg.Settings.Startup = StartupSession
	if ts, warnings := sessionTools(t, m3, SessionRequest{SessionID: "c", Workspace: ws, First: true, Config: cfg}); len(ts) != 6 || len(warnings) != 0 {
		t.Fatalf("session start: %v %v", names(ts), warnings)
	}
	if running, _ := m3.Running(ws, s); !running {
		t.Fatal("startup session did not start the server")
	}
}

// TestReadOnlyHints: an MCP tool is a read only when its server marks it
// read-only and the user trusts that server's hints.
func TestReadOnlyHints(t *testing.T) {
	t.Parallel()
	home, ws := t.TempDir(), t.TempDir()
	m := NewManager(Options{Home: home, Environ: testEnviron})
	defer m.Close()
	for i, tt := range []struct {
		trust []string
		want  tools.Risk
	}{{nil, tools.RiskExecute}, {[]string{"other"}, tools.RiskExecute}, {[]string{"hinted"}, tools.RiskRead}} {
		set := fastSettings()
		set.TrustReadOnly = tt.trust
		cfg := &Config{Servers: []*Server{helperServer("hinted", nil)}, Settings: set}
		ts, _ := sessionTools(t, m, SessionRequest{SessionID: "r" + string(rune('0'+i)), Workspace: ws, First: true, Config: cfg})
		byName := map[string]tools.Tool{}
		for _, tl := range ts {
			byName[tl.Info().Name] = tl
		}
		if got := byName["mcp__hinted__echo"].Info().Risk; got != tt.want {
			t.Errorf("trust %v: echo risk %s, want %s", tt.trust, got, tt.want)
		}
		if got := byName["mcp__hinted__env"].Info().Risk; got != tools.RiskExecute {
			t.Errorf("trust %v: env (no hint) risk %s", tt.trust, got)
		}
	}
}

// TestFailingServerWarns: a server that does not start leaves its tools
// out with a warning; the others are there.
func TestFailingServerWarns(t *testing.T) {
	t.Parallel()
	home, ws := t.TempDir(), t.TempDir()
	m := NewManager(Options{Home: home, Environ: testEnviron})
	defer m.Close()
	cfg := &Config{Servers: []*Server{helperServer("good", nil),
		{Name: "bad", Source: SourceUser, Transport: TransportStdio, Command: "sh", Args: []string{"-c", "exit 1"}}},
		Settings: fastSettings(), Problems: []error{errors.New("broken entry")}}
	ts, warnings := sessionTools(t, m, SessionRequest{SessionID: "w", Workspace: ws, First: true, Config: cfg})
	if len(ts) != 6 || len(warnings) != 2 || warnings[0] != "broken entry" || !strings.Contains(warnings[1], `"bad" did not start`) {
		t.Fatalf("tools %v, warnings %q", names(ts), warnings)
	}
}

// TestLoad: a project's servers are used only in a trusted workspace and
// once approved as written; a user server of the same name wins; a
// symlinked .mcp.json is refused.
func TestLoad(t *testing.T) {
	t.Parallel()
	home, ws := t.TempDir(), t.TempDir()
	write := func(text string) {
		if err := os.WriteFile(filepath.Join(ws, ".mcp.json"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"mcpServers": {"proj": {"command": "touch", "args": ["started"]}, "dup": {"command": "x"}}}`)
	user := json.RawMessage(`{"dup": {"command": "mine"}}`)
	load := func(trusted bool) *Config {
		c, err := Load(LoadOptions{Home: home, Workspace: ws, UserPath: "settings.json", UserServers: user, Trusted: trusted})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	held := func(c *Config) map[string]Held {
		out := map[string]Held{}
		for _, h := range c.Held {
			out[h.Server.Name] = h
		}
		return out
	}
	c := load(false)
	if len(c.Servers) != 1 || c.Servers[0].Command != "mine" || !held(c)["proj"].Untrusted || !held(c)["dup"].Shadowed {
		t.Fatalf("untrusted: servers %v, held %+v", c.Servers, c.Held)
	}
	c = load(true)
	if h := held(c)["proj"]; h.Untrusted || !strings.Contains(h.Reason, "mx-claw mcp approve proj") || len(c.Servers) != 1 {
		t.Fatalf("trusted, not approved: %+v", c.Held)
	}
	proj := held(c)["proj"].Server
	if err := Approve(home, ws, proj, time.Now()); err != nil {
		t.Fatal(err)
	}
	if c = load(true); c.Find("proj") == nil {
		t.Fatalf("approved: %+v", c.Held)
	}
	// A changed entry needs a new approval.
	write(`{"mcpServers": {"proj": {"command": "touch", "args": ["other"]}}}`)
	if c = load(true); c.Find("proj") != nil {
		t.Fatal("an approval carried over to a changed entry")
	}
	if ok, err := Revoke(home, ws, "proj"); !ok || err != nil {
		t.Fatalf("Revoke: %v %v", ok, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "started")); err == nil {
		t.Fatal("something started the project's server")
	}
	// A symbolic link as .mcp.json is refused.
	os.Remove(filepath.Join(ws, ".mcp.json"))
	elsewhere := filepath.Join(t.TempDir(), "servers.json")
	os.WriteFile(elsewhere, []byte(`{"mcpServers": {"proj": {"command": "touch"}}}`), 0o644)
	if err := os.Symlink(elsewhere, filepath.Join(ws, ".mcp.json")); err != nil {
		t.Fatal(err)
	}
	c = load(true)
	if len(c.Problems) != 1 || !strings.Contains(c.Problems[0].Error(), "symbolic link") || len(c.Held) != 0 {
		t.Fatalf("symlinked .mcp.json: problems %v, held %v", c.Problems, c.Held)
	}
}
