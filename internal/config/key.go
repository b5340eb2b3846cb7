package config

import (
	"fmt"
	"os"
	"strings"
)

// KeyEnvVars returns the environment variables an API key for the named
// provider may come from, in the order they are read.
func KeyEnvVars(provider string) []string {
	vars := make([]string, 0, 2)
	switch provider {
	case "openai":
		vars = append(vars, "OPENAI_API_KEY")
	case "deepseek":
		vars = append(vars, "DEEPSEEK_API_KEY")
	}
	return append(vars, "MX_CLAW_API_KEY_"+envName(provider))
}

func envName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// EnvKey returns the API key for the named provider from its environment
// variables, or "".
func EnvKey(provider string) string {
	for _, v := range KeyEnvVars(provider) {
		if k := strings.TrimSpace(os.Getenv(v)); k != "" {
			return k
		}
	}
	return ""
}

// Ready reports why the provider cannot serve requests with the given key,
// naming the missing step and the command that fixes it; nil if it can.
// It follows the article's isProviderReady: a base URL, a default model, a
// non-empty model list and, if the provider requires one, a key.
func Ready(p *Provider, key string) error {
	switch {
	case strings.TrimSpace(p.BaseURL) == "":
		return fmt.Errorf("provider %s has no base URL; run `mx-claw model configure %s`", p.Name, p.Name)
	case len(p.Models) == 0:
		return fmt.Errorf("provider %s has no models; run `mx-claw model configure %s` or `mx-claw model add-model %s MODEL`", p.Name, p.Name, p.Name)
	case strings.TrimSpace(p.Model) == "":
		return fmt.Errorf("provider %s has no default model; run `mx-claw model default %s/MODEL`", p.Name, p.Name)
	case p.RequiresAPIKey && strings.TrimSpace(key) == "":
		return fmt.Errorf("provider %s needs an API key; set %s or run `mx-claw model set %s api-key`", p.Name, KeyEnvVars(p.Name)[0], p.Name)
	}
	return nil
}
