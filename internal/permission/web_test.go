package permission

import (
	"encoding/json"
	"strings"
	"testing"
)

func fetchReq(u string) Request {
	args, _ := json.Marshal(map[string]string{"url": u})
	return Request{Tool: WebFetchTool, Risk: "read", Args: args, Workspace: "/ws"}
}

func TestWebFetchDomainRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		allow, ask, deny []string
		mode             Mode
		url              string
		want             Action
		suggest          string
	}{
		{name: "asks by default", url: "https://docs.python.org/3/", want: Ask, suggest: "web_fetch(domain:docs.python.org)"},
		{name: "asks in acceptEdits", mode: ModeAcceptEdits, url: "https://example.com/", want: Ask},
		{name: "asks in plan", mode: ModePlan, url: "https://example.com/", want: Ask},
		{name: "bypass allows", mode: ModeBypass, url: "https://example.com/", want: Allow},
		{name: "exact host", allow: []string{"web_fetch(domain:docs.python.org)"}, url: "https://docs.python.org/3/library/", want: Allow},
		{name: "subdomain", allow: []string{"web_fetch(domain:python.org)"}, url: "https://docs.python.org/", want: Allow},
		{name: "case and final dot", allow: []string{"web_fetch(domain:Python.ORG)"}, url: "https://DOCS.python.org./", want: Allow},
		{name: "suffix is not a subdomain", allow: []string{"web_fetch(domain:allowed.com)"}, url: "https://allowed.com.evil.net/", want: Ask},
		{name: "no partial label", allow: []string{"web_fetch(domain:allowed.com)"}, url: "https://notallowed.com/", want: Ask},
		{name: "userinfo is not the host", allow: []string{"web_fetch(domain:allowed.com)"}, url: "https://allowed.com@evil.net/", want: Ask},
		{name: "port ignored", allow: []string{"web_fetch(domain:localhost)"}, url: "http://localhost:8080/", want: Allow},
		{name: "ipv6 literal", allow: []string{"web_fetch(domain:[::1])"}, url: "http://[::1]:3000/", want: Allow},
		{name: "star prefix", allow: []string{"web_fetch(domain:*.example.com)"}, url: "https://a.example.com/", want: Allow},
		{name: "whole tool", allow: []string{"web_fetch"}, url: "https://anything.test/", want: Allow},
		{name: "claude alias", allow: []string{"WebFetch(domain:example.com)"}, url: "https://example.com/", want: Allow},
		{name: "deny beats allow", allow: []string{"web_fetch"}, deny: []string{"web_fetch(domain:evil.net)"}, url: "https://x.evil.net/", want: Deny},
		{name: "deny beats bypass", mode: ModeBypass, deny: []string{"web_fetch(domain:evil.net)"}, url: "https://evil.net/", want: Deny},
		{name: "ask rule beats bypass", mode: ModeBypass, ask: []string{"web_fetch"}, url: "https://example.com/", want: Ask},
		{name: "no host", allow: []string{"web_fetch(domain:example.com)"}, url: "file:///etc/passwd", want: Ask},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := policy(t, tt.mode, tt.allow, tt.ask, tt.deny)
			d := p.Decide(fetchReq(tt.url))
			if d.Action != tt.want {
				t.Fatalf("Decide(%s) = %s (%s), want %s", tt.url, d.Action, d.Reason, tt.want)
			}
			if tt.suggest != "" && d.Suggest != tt.suggest {
				t.Errorf("Suggest = %q, want %q", d.Suggest, tt.suggest)
			}
			if d.Suggest != "" {
				if _, err := ParseRule(d.Suggest); err != nil {
					t.Errorf("suggested rule does not parse: %v", err)
				}
			}
		})
	}
}

func TestWebFetchRuleErrors(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"web_fetch(docs.python.org)",
		"web_fetch(domain:)",
		"web_fetch(domain:https://x.com)",
		"web_fetch(domain:x.com/path)",
	} {
		if _, err := ParseRule(text); err == nil {
			t.Errorf("ParseRule(%q) succeeded", text)
		}
	}
}

func TestNamesHost(t *testing.T) {
	t.Parallel()
	p := policy(t, ModeBypass, []string{"web_fetch(domain:localhost)", "web_fetch(domain:127.0.0.1)", "web_fetch", "web_fetch(domain:internal.corp)"},
		nil, []string{"web_fetch(domain:bad.internal.corp)"})
	for host, want := range map[string]bool{
		"localhost": true, "127.0.0.1": true, "LOCALHOST.": true, "api.internal.corp": true,
		"bad.internal.corp": false, "10.0.0.1": false, "": false, "evil.localhost.net": false,
	} {
		if got := p.NamesHost(host); got != want {
			t.Errorf("NamesHost(%q) = %v, want %v", host, got, want)
		}
	}
	var nilPolicy *Policy
	if nilPolicy.NamesHost("localhost") {
		t.Error("a nil policy names a host")
	}
}

func TestWebSearchRules(t *testing.T) {
	t.Parallel()
	req := Request{Tool: WebSearchTool, Risk: "read", Args: json.RawMessage(`{"query":"go generics"}`)}
	if d := policy(t, ModeDefault, nil, nil, nil).Decide(req); d.Action != Ask || d.Suggest != "web_search" {
		t.Errorf("default: %s %q", d.Action, d.Suggest)
	}
	if d := policy(t, ModeDefault, []string{"web_search"}, nil, nil).Decide(req); d.Action != Allow {
		t.Errorf("allowed: %s", d.Action)
	}
	if d := policy(t, ModeBypass, nil, nil, []string{"WebSearch"}).Decide(req); d.Action != Deny || !strings.Contains(d.Reason, "denied") {
		t.Errorf("denied: %s %s", d.Action, d.Reason)
	}
}
