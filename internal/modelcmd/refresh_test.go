package modelcmd

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
)

const refreshKey = "sk-refresh-SECRET-0123456789abcdef"

func TestRefreshMergesWithLLMTest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := llmtest.NewTestServer(t)
	srv.SetModels("m2", "m9", "fresh-1", "bad name")
	f := newFixture(t, configured(srv.URL()), "MX_CLAW_API_KEY_GW", refreshKey)
	if err := f.h.Run(ctx, []string{"add-model", "gw", "by-hand"}); err != nil {
		t.Fatal(err)
	}
	if err := f.h.Run(ctx, []string{"refresh"}); err != nil {
		t.Fatal(err)
	}
	// Known models stay first and in order; new ones follow; invalid
	// names are skipped.
	if got := strings.Join(f.reload().Providers["gw"].Models, ","); got != "m1,m2,by-hand,m9,fresh-1" {
		t.Errorf("models after refresh: %s", got)
	}
	if !strings.Contains(f.out.String(), "gw: added 2 models from /models: m9, fresh-1") {
		t.Errorf("output %s", f.out)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	if last.Method != http.MethodGet || last.Path != "/v1/models" || last.Header.Get("Authorization") != "Bearer "+refreshKey {
		t.Errorf("request %s %s, Authorization %q", last.Method, last.Path, last.Header.Get("Authorization"))
	}
	// Refreshing again adds nothing.
	f.out.Reset()
	if err := f.h.Refresh(ctx, "gw"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.out.String(), "none new") {
		t.Errorf("second refresh: %s", f.out)
	}
	noLeak(t, "output", f.out.String(), refreshKey)
}

func TestRefreshBuiltinKeepsItsModels(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewTestServer(t)
	srv.SetModels("gpt-4o", "gpt-5")
	f := newFixture(t, `{"version":1,"activeProvider":"openai","providers":{"openai":{"baseURL":"`+srv.URL()+`","model":"gpt-4.1","models":["gpt-4.1","gpt-4o"],"requiresApiKey":true,"configured":true}}}`,
		"OPENAI_API_KEY", refreshKey)
	if err := f.h.Refresh(context.Background(), "openai"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.reload().Providers["openai"].Models, ","); got != "gpt-4.1,gpt-4o,gpt-5" {
		t.Errorf("models %s", got)
	}
}

// gateway answers GET /v1/models with a fixed status and body and records
// the Authorization headers it saw.
type gateway struct {
	mu    sync.Mutex
	auths []string
	srv   *httptest.Server
}

func newGateway(t *testing.T, status int, body string) *gateway {
	g := &gateway{}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.auths = append(g.auths, r.Header.Get("Authorization"))
		g.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(g.srv.Close)
	return g
}

func TestRefreshFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	long := strings.Repeat("x", 995) + refreshKey + strings.Repeat("y", 2000)
	tests := []struct {
		name   string
		status int
		body   string
		want   string
		check  func(t *testing.T, msg string)
	}{
		{"401 echoing the key", 401, `{"error":{"message":"Incorrect API key provided: ` + refreshKey + `","type":"invalid_request_error"}}`,
			`Model discovery failed (401): {"error":{"message":"Incorrect API key provided: [redacted]"`, nil},
		{"500 plain text", 500, "upstream exploded", "Model discovery failed (500): upstream exploded", nil},
		{"key across the 1,000-byte cut", 502, long, "Model discovery failed (502): ", func(t *testing.T, msg string) {
			body := strings.TrimPrefix(msg, "Model discovery failed (502): ")
			if len(body) != 1000 || !strings.HasSuffix(body, strings.Repeat("x", 5)+"[reda") {
				t.Errorf("body is %d bytes, ends %q", len(body), body[len(body)-10:])
			}
		}},
		{"malformed JSON", 200, `{"data":[{"id":"m`, "did not answer with JSON", nil},
		{"not a model list", 200, `{"object":"list"}`, `no "data"`, nil},
		{"HTML", 200, `<html>` + refreshKey + `</html>`, "did not answer with JSON", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := newGateway(t, tt.status, tt.body)
			f := newFixture(t, configured(g.srv.URL+"/v1"), "MX_CLAW_API_KEY_GW", refreshKey)
			before := f.configFile()
			err := f.h.Refresh(ctx, "gw")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			noLeak(t, "error", err.Error(), refreshKey)
			if tt.status >= 400 {
				var de *DiscoveryError
				if !errors.As(err, &de) || de.Status != tt.status {
					t.Errorf("not a DiscoveryError with status %d: %#v", tt.status, err)
				}
			}
			if tt.check != nil {
				tt.check(t, err.Error())
			}
			if f.configFile() != before {
				t.Error("a failed refresh changed the config")
			}
			if len(g.auths) != 1 || g.auths[0] != "Bearer "+refreshKey {
				t.Errorf("Authorization headers %q", g.auths)
			}
		})
	}
}

func TestRefreshSkipsProvidersNotReady(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGateway(t, 200, `{"data":[]}`)
	// deepseek needs a key and has none; ollama has no models.
	f := newFixture(t, `{"version":1,"activeProvider":"deepseek","providers":{"deepseek":{"baseURL":"`+g.srv.URL+`","model":"a","models":["a"],"requiresApiKey":true},"ollama":{"baseURL":"`+g.srv.URL+`"}}}`)
	for _, p := range []string{"", "ollama"} {
		if err := f.h.Refresh(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.out.String(); got != "Refresh skipped: deepseek needs configuration\nRefresh skipped: ollama needs configuration\n" {
		t.Errorf("output %q", got)
	}
	if len(g.auths) != 0 {
		t.Errorf("%d requests for providers that are not ready", len(g.auths))
	}
	if err := f.h.Refresh(ctx, "nope"); err == nil {
		t.Error("unknown provider accepted")
	}
}

func TestDiscoverWithoutKeySendsNoAuthorization(t *testing.T) {
	t.Parallel()
	g := newGateway(t, 200, `{"models":[{"name":"llama3.2"},{"id":"qwen"}]}`)
	got, err := Discover(context.Background(), nil, g.srv.URL+"/", "")
	if err != nil || strings.Join(got, ",") != "llama3.2,qwen" {
		t.Fatalf("Discover = %v, %v", got, err)
	}
	if g.auths[0] != "" {
		t.Errorf("Authorization %q without a key", g.auths[0])
	}
}
