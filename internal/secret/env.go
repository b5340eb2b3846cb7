package secret

import (
	"context"
	"strings"
)

// Env reads API keys from the providers' environment variables. It is
// read-only.
type Env struct {
	// Vars lists the variables a provider's key may come from, in order
	// (config.KeyEnvVars).
	Vars func(provider string) []string
	// Getenv reads a variable (os.Getenv in production).
	Getenv func(string) string
}

// Name returns "env".
func (e *Env) Name() string { return NameEnv }

// Get returns the first non-empty variable of the provider named by key.
func (e *Env) Get(ctx context.Context, key string) (string, error) {
	v, _, err := e.lookup(key)
	return v, err
}

// lookup is Get that also says which variable held the value.
func (e *Env) lookup(key string) (value, variable string, err error) {
	p := providerOf(key)
	if p == "" || e.Vars == nil || e.Getenv == nil {
		return "", "", ErrNotFound
	}
	for _, name := range e.Vars(p) {
		if v := strings.TrimSpace(e.Getenv(name)); v != "" {
			return v, name, nil
		}
	}
	return "", "", ErrNotFound
}
