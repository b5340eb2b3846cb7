package app

import (
	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/secret"
	"github.com/mx-claw/mx-claw/internal/tools"
	"github.com/mx-claw/mx-claw/internal/tools/builtin"
	"github.com/mx-claw/mx-claw/internal/webfetch"
	"github.com/mx-claw/mx-claw/internal/websearch"
)

// WebSearchKeyName is the name the web_search backend's API key has in
// the secret chain: MX_CLAW_API_KEY_WEBSEARCH, or provider:websearch in a
// store or for MX_CLAW_SECRET_COMMAND.
const WebSearchKeyName = "websearch"

// webTools returns the tools that reach the web: web_fetch (the system
// resolver and dialer, the environment's proxies, the default limits)
// and, when config.json names a search backend, web_search, whose key is
// read from the secret chain at each search.
func webTools(cfg *config.Config, secrets *secret.Chain) ([]tools.Tool, error) {
	out := []tools.Tool{builtin.NewWebFetch(&webfetch.Fetcher{Proxy: webfetch.ProxyFromEnvironment()})}
	ws := cfg.WebSearch
	if ws == nil || ws.Backend == "" {
		return out, nil
	}
	key := func() (string, error) {
		v, _, err := secrets.GetKey(WebSearchKeyName)
		return v, err
	}
	s, err := websearch.New(ws.Backend, ws.URL, key)
	if err != nil {
		return nil, err
	}
	return append(out, builtin.NewWebSearch(s)), nil
}
