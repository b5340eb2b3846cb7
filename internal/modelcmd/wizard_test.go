package modelcmd

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// modelsServer answers GET /models with two models.
func modelsServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"data":[{"id":"coder-large"},{"id":"coder-small"}]}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestWizardPicksFromListedModels: the wizard offers the models the
// server lists instead of asking for their names.
func TestWizardPicksFromListedModels(t *testing.T) {
	t.Parallel()
	url := modelsServer(t)
	f := newFixture(t, "")
	s := f.prompt(input(url), secretA(""), sel("coder-small"))
	if err := f.h.Configure(context.Background(), "gw"); err != nil {
		t.Fatal(err)
	}
	s.done()
	p := f.reload().Providers["gw"]
	if p == nil || p.Model != "coder-small" || strings.Join(p.Models, ",") != "coder-large,coder-small" {
		t.Errorf("provider %+v", p)
	}
	if !strings.Contains(f.out.String(), "lists 2 models") {
		t.Errorf("output:\n%s", f.out)
	}
}

// TestWizardTestsBeforeSaving: a failed test request offers to change the
// settings; the second round's settings work and are saved. Declining to
// change or save saves nothing.
func TestWizardTestsBeforeSaving(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := modelsServer(t)
	var probed []string
	probe := func(ctx context.Context, baseURL, key, model string) error {
		probed = append(probed, key+"@"+model)
		if key != "good-key-123" {
			return errors.New("provider returned 401 Unauthorized")
		}
		return nil
	}
	f := newFixture(t, "")
	f.h.Probe = probe
	s := f.prompt(input(url), secretA("bad-key-456"), sel("coder-large"), confirm(true),
		input(""), secretA("good-key-123"), sel("coder-large"))
	if err := f.h.Configure(ctx, "gw"); err != nil {
		t.Fatal(err)
	}
	s.done()
	if got := strings.Join(probed, " "); got != "bad-key-456@coder-large good-key-123@coder-large" {
		t.Errorf("probes: %s", got)
	}
	if f.storedKey("gw") != "good-key-123" || !strings.Contains(f.out.String(), "The test request failed: provider returned 401") {
		t.Errorf("key %q, output:\n%s", f.storedKey("gw"), f.out)
	}

	f = newFixture(t, "")
	f.h.Probe = probe
	s = f.prompt(input(url), secretA("bad-key-456"), sel("coder-large"), confirm(false), confirm(false))
	if err := f.h.Configure(ctx, "gw"); !errors.Is(err, ErrCancelled) {
		t.Fatalf("declined: %v", err)
	}
	s.done()
	if f.configFile() != "" || f.storedKey("gw") != "" {
		t.Error("saved after the user declined")
	}
}
