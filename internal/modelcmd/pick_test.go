package modelcmd

import (
	"context"
	"strings"
	"testing"
)

// TestPickAcrossProviders: /model without arguments lists the models of
// every ready provider, marks the session's, and switches the session to
// another provider's model without touching the default.
func TestPickAcrossProviders(t *testing.T) {
	t.Parallel()
	cfg := `{"version":1,"activeProvider":"gw","providers":{
"gw":{"name":"gw","kind":"custom","baseURL":"http://127.0.0.1:1/v1","model":"m1","models":["m1","m2"],"requiresApiKey":false,"configured":true},
"local":{"name":"local","kind":"custom","baseURL":"http://127.0.0.1:2/v1","model":"q","models":["q"],"requiresApiKey":false,"configured":true}}}`
	f := newFixture(t, cfg)
	sess := &fakeSession{model: "gw/m2"}
	f.h.Session = sess
	s := f.prompt(sel("local/q"))
	if err := f.h.Run(context.Background(), []string{"pick"}); err != nil {
		t.Fatal(err)
	}
	s.done()
	var labels []string
	for _, o := range s.menus[0] {
		labels = append(labels, o.Label)
	}
	if got := strings.Join(labels, ", "); got != "gw/m1, gw/m2 · current, local/q" {
		t.Errorf("menu: %s", got)
	}
	if sess.model != "local/q" || f.reload().ActiveProvider != "gw" {
		t.Errorf("session %s, default provider %s", sess.model, f.reload().ActiveProvider)
	}
}
