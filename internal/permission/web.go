package permission

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// The tools that reach the network, whose rules are judged by host.
const (
	// WebFetchTool takes rules `web_fetch` (every URL) and
	// `web_fetch(domain:HOST)`: the host itself or any of its subdomains
	// (`domain:python.org` matches docs.python.org, not
	// python.org.evil.net).
	WebFetchTool = "web_fetch"
	// WebSearchTool takes only the whole-tool rule `web_search`.
	WebSearchTool = "web_search"
)

// domainPrefix starts the pattern of a web_fetch rule.
const domainPrefix = "domain:"

// parseDomain fills a web_fetch rule; it returns a problem or "".
func (r *Rule) parseDomain(pat string) string {
	host, ok := strings.CutPrefix(pat, domainPrefix)
	if !ok {
		return "a web_fetch rule names a host: web_fetch(domain:example.com)"
	}
	host = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(host)), "*.")
	host = strings.Trim(strings.TrimSuffix(host, "."), "[]")
	if host == "" {
		return "empty domain"
	}
	for _, c := range host {
		if !(c == '.' || c == '-' || c == ':' || c == '_' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c > 0x7f) {
			return fmt.Sprintf("domain %s has the invalid character %q (write the host alone, no scheme, port or path)", host, c)
		}
	}
	r.kind, r.host = ruleDomain, host
	return ""
}

// matchHost reports whether a web_fetch rule covers host: a whole-tool
// rule every host, a domain rule its host and that host's subdomains.
func (r Rule) matchHost(host string) bool {
	switch r.kind {
	case ruleTool:
		return true
	case ruleDomain:
		return host != "" && (host == r.host || strings.HasSuffix(host, "."+r.host))
	}
	return false
}

// URLHost returns the host a web_fetch call's arguments name, lower-case
// and without a final dot (or brackets of an IPv6 address): what domain
// rules are matched against. It is "" when the url argument has no host.
func URLHost(args json.RawMessage) string {
	var a struct {
		URL string `json:"url"`
	}
	if json.Unmarshal(args, &a) != nil {
		return ""
	}
	u, err := url.Parse(strings.TrimSpace(a.URL))
	if err != nil {
		return ""
	}
	return NormalHost(u.Hostname())
}

// NormalHost writes a host the way domain rules compare it.
func NormalHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
}

// NamesHost reports whether an allow rule (from settings or a grant) names
// host with a domain pattern, which lets web_fetch reach it even on a
// loopback or private address. A whole-tool rule names no host; a deny
// rule for the host wins.
func (p *Policy) NamesHost(host string) bool {
	host = NormalHost(host)
	if p == nil || host == "" {
		return false
	}
	if p.match(Deny, func(r Rule) bool { return r.matchTool(WebFetchTool) && r.matchHost(host) }) != nil {
		return false
	}
	return p.match(Allow, func(r Rule) bool {
		return r.Tool == WebFetchTool && r.kind == ruleDomain && r.matchHost(host)
	}) != nil
}

// decideWeb decides a call of a network tool: rules by host, then the
// mode — bypass allows, every other mode asks, since what a call sends
// (its URL, its query) leaves the machine.
func (p *Policy) decideWeb(req Request) Decision {
	host := ""
	if req.Tool == WebFetchTool {
		host = URLHost(req.Args)
	}
	what := req.Tool
	if host != "" {
		what += " of " + host
	}
	d := Decision{Parts: []PartDecision{{Subject: what}}}
	set := func(a Action, s Source, reason string) Decision {
		d.Action, d.Source, d.Reason = a, s, reason
		d.Parts[0].Action, d.Parts[0].Source, d.Parts[0].Reason = a, s, reason
		return d
	}
	match := func(r Rule) bool { return r.matchTool(req.Tool) && r.matchHost(host) }
	if r := p.match(Deny, match); r != nil {
		return set(Deny, ruleSource(r), ruleReason(r, what))
	}
	if r := p.match(Ask, match); r != nil {
		return set(Ask, ruleSource(r), ruleReason(r, what))
	}
	if r := p.match(Allow, match); r != nil {
		return set(Allow, ruleSource(r), ruleReason(r, what))
	}
	mode := p.Mode()
	if mode == ModeBypass {
		return set(Allow, Source{Kind: SourceMode, Mode: mode}, "bypass mode allows "+what)
	}
	d = set(Ask, Source{Kind: SourceMode, Mode: mode}, what+" needs approval: it reaches the network")
	switch {
	case req.Tool == WebSearchTool:
		d.Suggest = WebSearchTool
	case host != "":
		d.Suggest = WebFetchTool + "(" + domainPrefix + host + ")"
	}
	return d
}
