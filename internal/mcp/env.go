package mcp

import (
	"slices"
	"strings"

	"github.com/mx-claw/mx-claw/internal/execx"
)

// childEnv is a stdio server's environment: the allow-listed base of
// environ (execx.DefaultEnvAllow, never a secret-looking variable; see
// execx.Env) and then the variables the entry declares, which win over
// the base's. Nothing else of mx-claw's environment reaches the server.
func childEnv(environ []string, declared map[string]string) []string {
	base := execx.Env(environ, execx.DefaultEnvAllow)
	out := make([]string, 0, len(base)+len(declared))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if _, over := declared[name]; !over {
			out = append(out, kv)
		}
	}
	for _, k := range sortedKeys(declared) {
		out = append(out, k+"="+declared[k])
	}
	return out
}

// envLookup looks variables up in environ (os.Environ() form).
func envLookup(environ []string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		// The last definition wins, as with os.Getenv.
		for _, kv := range slices.Backward(environ) {
			if v, ok := strings.CutPrefix(kv, name+"="); ok {
				return v, true
			}
		}
		return "", false
	}
}
