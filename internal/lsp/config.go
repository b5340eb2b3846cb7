package lsp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// ServerConfig is a language server and the files it checks.
type ServerConfig struct {
	// Name names the server in messages ("gopls").
	Name string `json:"-"`
	// Command and Args start it; it speaks LSP on stdin and stdout.
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
	// Extensions are the file extensions it checks (".go").
	Extensions []string `json:"extensions"`
	// LanguageID is the languageId of its documents; the extension
	// without its dot if empty.
	LanguageID string `json:"languageId,omitempty"`
}

func (c ServerConfig) languageID(path string) string {
	if c.LanguageID != "" {
		return c.LanguageID
	}
	return strings.TrimPrefix(filepath.Ext(path), ".")
}

// Defaults are the servers used unless the settings say otherwise.
func Defaults() []ServerConfig {
	return []ServerConfig{{Name: "gopls", Command: "gopls", Extensions: []string{".go"}, LanguageID: "go"}}
}

// Settings is the "lsp" object of the user's settings.json:
//
//	{"lsp": {"enabled": true, "servers": {
//	  "gopls":   {"command": "gopls", "extensions": [".go"]},
//	  "pyright": {"command": "pyright-langserver", "args": ["--stdio"], "extensions": [".py"]}}}}
//
// A server named like a default replaces it; null removes it. "enabled":
// false turns diagnostics off.
type Settings struct {
	Enabled *bool                       `json:"enabled"`
	Servers map[string]*json.RawMessage `json:"servers"`
	// TimeoutSeconds bounds the wait for a server's diagnostics.
	TimeoutSeconds float64 `json:"timeoutSeconds"`
}

// ParseSettings returns the servers the "lsp" settings object raw (nil for
// none) configures, and whether diagnostics are on. Its errors name the
// entry at fault.
func ParseSettings(raw json.RawMessage) (servers []ServerConfig, enabled bool, s Settings, err error) {
	servers = Defaults()
	if len(raw) == 0 || string(raw) == "null" {
		return servers, true, s, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, false, s, fmt.Errorf("lsp: %w", err)
	}
	if s.Enabled != nil && !*s.Enabled {
		return nil, false, s, nil
	}
	names := make([]string, 0, len(s.Servers))
	for n := range s.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		servers = slices.DeleteFunc(servers, func(c ServerConfig) bool { return c.Name == name })
		raw := s.Servers[name]
		if raw == nil || string(*raw) == "null" {
			continue
		}
		var c ServerConfig
		if err := json.Unmarshal(*raw, &c); err != nil {
			return nil, false, s, fmt.Errorf("lsp.servers.%s: %w", name, err)
		}
		c.Name = name
		if strings.TrimSpace(c.Command) == "" {
			return nil, false, s, fmt.Errorf("lsp.servers.%s: \"command\" is empty", name)
		}
		if len(c.Extensions) == 0 {
			return nil, false, s, fmt.Errorf("lsp.servers.%s: \"extensions\" lists no file extension", name)
		}
		for i, e := range c.Extensions {
			if !strings.HasPrefix(e, ".") {
				c.Extensions[i] = "." + e
			}
		}
		servers = append(servers, c)
	}
	return servers, true, s, nil
}
