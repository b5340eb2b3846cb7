package mcp

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestParseProjectFiles reads .mcp.json files shaped like those of public
// repositories (testdata/mcpjson): each usable entry comes out as written,
// each broken one is reported by name while the others of its file stay
// usable.
func TestParseProjectFiles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file     string
		want     []Server // Source and Path left out
		problems []string // each a server name and a piece of the message
	}{
		{file: "npx-github.json", want: []Server{{Name: "github", Transport: TransportStdio, Command: "npx",
			Args: []string{"-y", "@modelcontextprotocol/server-github"}, Env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"}}}},
		{file: "http-headers.json", want: []Server{{Name: "github", Transport: TransportHTTP, URL: "https://api.example.com/mcp/",
			Headers: map[string]string{"Authorization": "Bearer ${GITHUB_TOKEN}", "X-Team": "${TEAM:-platform}"}}}},
		{file: "sse.json", want: []Server{{Name: "notes", Transport: TransportSSE, URL: "https://mcp.example.com/sse"}}},
		{file: "python-venv-extra-keys.json", want: []Server{
			{Name: "browser", Transport: TransportStdio, Command: "npx",
				Args: []string{"@playwright/mcp@latest", "--browser", "chromium", "--headless", "--viewport-size", "1280x720"}},
			{Name: "knowledge-base", Transport: TransportStdio, Command: "/opt/tools/kb/.venv/bin/python3",
				Args: []string{"/opt/tools/kb/mcp_server/server.py"}, Env: map[string]string{"KB_CONFIG": "/srv/project/.kb.yml", "PYTHONPATH": "/opt/tools/kb"}},
		}},
		{file: "explicit-stdio-docker.json", want: []Server{
			{Name: "feeds", Transport: TransportStdio, Command: "cargo", Args: []string{"run", "--quiet", "--", "--config", "feeds.toml"}},
			{Name: "gh", Transport: TransportStdio, Command: "docker",
				Args: []string{"run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"}, Env: map[string]string{}},
		}},
		{file: "vscode-inputs.json",
			want:     []Server{{Name: "local", Transport: TransportStdio, Command: "node", Args: []string{"./mcp-server/index.js"}}},
			problems: []string{`"jenkins": headers.Authorization: ${input:jenkins-basic-auth}: only ${NAME}`}},
		{file: "broken.json",
			want: []Server{{Name: "fine", Transport: TransportStdio, Command: "uvx", Args: []string{"mcp-server-time"}}},
			problems: []string{
				`"bad-args": args must be an array of strings`,
				`"bad-type": type "websocket": want stdio, http or sse`,
				`"bad-url": url "ftp://example.com/mcp" must start with http:// or https://`,
				`"no-command": has neither "command" nor "url"`,
				`"url-with-password": url must not hold a user name or password`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("testdata", "mcpjson", tt.file)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			servers, problems := ParseProjectFile(data, path)
			var got []Server
			for _, s := range servers {
				if s.Source != SourceProject || s.Path != path {
					t.Errorf("%s: source %s, path %s", s.Name, s.Source, s.Path)
				}
				c := *s
				c.Source, c.Path = "", ""
				got = append(got, c)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("servers:\n got %+v\nwant %+v", got, tt.want)
			}
			if len(problems) != len(tt.problems) {
				t.Fatalf("problems: %v, want %d", problems, len(tt.problems))
			}
			for i, p := range problems {
				if !errors.Is(p, ErrInvalidConfig) || !strings.Contains(p.Error(), tt.problems[i]) || !strings.Contains(p.Error(), path) {
					t.Errorf("problem %d: %v, want one naming %s with %q", i, p, path, tt.problems[i])
				}
			}
		})
	}
}

func TestParseNotAnObject(t *testing.T) {
	t.Parallel()
	for _, text := range []string{`[]`, `{"mcpServers": []}`, `{"mcpServers": {"x": "npx"}}`, `not json`} {
		servers, problems := ParseProjectFile([]byte(text), ".mcp.json")
		if len(servers) != 0 || len(problems) != 1 {
			t.Errorf("%s: %v, %v; want one problem", text, servers, problems)
		}
	}
	for _, text := range []string{``, `{}`, `{"mcpServers": null}`, `{"mcpServers": {}}`} {
		if servers, problems := ParseProjectFile([]byte(text), ".mcp.json"); len(servers)+len(problems) != 0 {
			t.Errorf("%s: %v, %v; want nothing", text, servers, problems)
		}
	}
}

func TestExpand(t *testing.T) {
	t.Parallel()
	env := envLookup([]string{"TOKEN=t0k", "EMPTY=", "HOST=example.com", "OPENAI_API_KEY=sk-x"})
	s := &Server{Name: "x", Transport: TransportHTTP, URL: "https://${HOST}/mcp",
		Headers: map[string]string{"Authorization": "Bearer ${TOKEN}", "X-Empty": "${EMPTY:-fallback}", "X-Unset": "${UNSET:-d}", "X-Plain": "$TOKEN"}}
	e, err := s.Expand(env, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Authorization": "Bearer t0k", "X-Empty": "fallback", "X-Unset": "d", "X-Plain": "$TOKEN"}
	if e.URL != "https://example.com/mcp" || !reflect.DeepEqual(e.Headers, want) {
		t.Fatalf("expanded: %s %v", e.URL, e.Headers)
	}
	if got := s.Variables(); !reflect.DeepEqual(got, []string{"EMPTY", "HOST", "TOKEN", "UNSET"}) {
		t.Errorf("Variables = %v", got)
	}
	// A variable that is not set and has no default is an error naming it.
	s2 := &Server{Name: "y", Transport: TransportStdio, Command: "run", Args: []string{"--key=${MISSING}"}}
	if _, err := s2.Expand(env, nil); !errors.Is(err, ErrVariable) || !strings.Contains(err.Error(), "args[0]: environment variable MISSING is not set") {
		t.Errorf("missing variable: %v", err)
	}
	// A refused variable is never read, and its value is not shown.
	s3 := &Server{Name: "z", Transport: TransportStdio, Command: "run", Env: map[string]string{"K": "${OPENAI_API_KEY}"}}
	_, err = s3.Expand(env, func(n string) string {
		if n == "OPENAI_API_KEY" {
			return "no"
		}
		return ""
	})
	if !errors.Is(err, ErrVariable) || strings.Contains(err.Error(), "sk-x") || !strings.Contains(err.Error(), "env.K: ${OPENAI_API_KEY}: no") {
		t.Errorf("refused variable: %v", err)
	}
	// A URL that expands to something invalid is refused without being
	// shown: the variable may hold a secret.
	s4 := &Server{Name: "w", Transport: TransportHTTP, URL: "${TOKEN}"}
	if _, err := s4.Expand(env, nil); err == nil || strings.Contains(err.Error(), "t0k") {
		t.Errorf("bad expanded URL: %v", err)
	}
}

func TestHashFollowsTheEntry(t *testing.T) {
	t.Parallel()
	a := &Server{Name: "a", Transport: TransportStdio, Command: "npx", Args: []string{"x"}, Env: map[string]string{"A": "1", "B": "2"}}
	b := &Server{Name: "a", Transport: TransportStdio, Command: "npx", Args: []string{"x"}, Env: map[string]string{"B": "2", "A": "1"}}
	if a.Hash() != b.Hash() {
		t.Error("the hash depends on map order")
	}
	b.Args = []string{"y"}
	if a.Hash() == b.Hash() {
		t.Error("the hash ignores the arguments")
	}
}

func TestParseSettings(t *testing.T) {
	t.Parallel()
	s, err := ParseSettings([]byte(`{"startup":"session","startTimeout":"5s","callTimeout":"1m","maxResultBytes":2048,"maxMessageBytes":1048576,"trustReadOnlyHints":["github"]}`), "settings.json")
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{Startup: StartupSession, StartTimeout: 5 * time.Second, CallTimeout: time.Minute, MaxResultBytes: 2048,
		MaxMessageBytes: 1 << 20, TrustReadOnly: []string{"github"}}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("got %+v", s)
	}
	if !s.TrustsReadOnly("github") || s.TrustsReadOnly("other") {
		t.Error("TrustsReadOnly")
	}
	if s, _ := ParseSettings([]byte(`{"trustReadOnlyHints": true}`), "x"); !s.TrustsReadOnly("any") {
		t.Error("trustReadOnlyHints: true")
	}
	if s, err := ParseSettings(nil, "x"); err != nil || !reflect.DeepEqual(s, DefaultSettings()) {
		t.Errorf("no settings: %+v %v", s, err)
	}
	_, err = ParseSettings([]byte(`{"startup":"eager","callTimeout":"-1s","maxResultBytes":"big","trustReadOnlyHints":"yes","extra":1}`), "/h/settings.json")
	for _, want := range []string{"mcp.startup", "mcp.callTimeout", "mcp.maxResultBytes", "mcp.trustReadOnlyHints", "mcp.extra: unknown key", "/h/settings.json"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad settings: error %v lacks %q", err, want)
		}
	}
}

func TestToolName(t *testing.T) {
	t.Parallel()
	if got := ToolName("github", "create_issue"); got != "mcp__github__create_issue" {
		t.Errorf("got %s", got)
	}
	if got := ToolName("my.server", "get-env"); got != "mcp__my_server__get-env" {
		t.Errorf("got %s", got)
	}
	long := ToolName("a-very-long-server-name-for-testing", "an_equally_long_tool_name_that_goes_on_and_on")
	long2 := ToolName("a-very-long-server-name-for-testing", "an_equally_long_tool_name_that_goes_on_and_on_2")
	if len(long) != 64 || long == long2 || !strings.HasPrefix(long, "mcp__a-very-long") {
		t.Errorf("long names: %s %s", long, long2)
	}
}
