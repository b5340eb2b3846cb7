package app

import (
	"github.com/mx-claw/mx-claw/internal/tools"
	"github.com/mx-claw/mx-claw/internal/tools/builtin"
	"github.com/mx-claw/mx-claw/internal/webfetch"
)

// newWebFetch returns the web_fetch tool: the system resolver and dialer,
// the proxies of the environment, the default limits.
func newWebFetch() tools.Tool {
	return builtin.NewWebFetch(&webfetch.Fetcher{Proxy: webfetch.ProxyFromEnvironment()})
}
