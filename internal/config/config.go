// Package config reads and writes mx-claw's user configuration,
// $MX_CLAW_HOME/config.json: the model providers, their models and the
// active one. It never holds secrets on disk: API keys come from the secret
// chain (for now, the providers' environment variables) and apiKey is always
// written empty.
//
// The process loads the file once and works on that snapshot; Save writes
// atomically and updates the snapshot. Any package may import config.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mx-claw/mx-claw/internal/safefile"
)

// CurrentVersion is the config format version this mx-claw reads and writes.
const CurrentVersion = 1

// FileName is the config file's name inside the home directory.
const FileName = "config.json"

// Provider kinds.
const (
	KindBuiltin = "builtin"
	KindCustom  = "custom"
)

// Provider is one OpenAI-compatible model provider.
type Provider struct {
	Name           string   `json:"name"`
	Kind           string   `json:"kind"`
	BaseURL        string   `json:"baseURL"`
	Model          string   `json:"model"`
	Models         []string `json:"models"`
	APIKey         string   `json:"apiKey"`
	RequiresAPIKey bool     `json:"requiresApiKey"`
	Configured     bool     `json:"configured"`
}

// Config is the content of config.json.
type Config struct {
	Version        int                  `json:"version"`
	ActiveProvider string               `json:"activeProvider"`
	Providers      map[string]*Provider `json:"providers"`
	// MaxIterations caps the model steps of a turn; 0 means the default.
	MaxIterations int `json:"maxIterations,omitempty"`
	// CompactThreshold is the share of a model's context window above which
	// the conversation is compacted before a request; 0 means 0.8.
	CompactThreshold float64 `json:"compactThreshold,omitempty"`
	// Budget caps what a run and a session may spend.
	Budget Budget `json:"budget,omitzero"`
	// StreamIdleTimeout is how long to wait for the next piece of a
	// model's answer before the request counts as stalled and is sent
	// again (a Go duration, e.g. "2m"); "" means two minutes.
	StreamIdleTimeout string `json:"streamIdleTimeout,omitempty"`
	// ModelSettings override what mx-claw knows of a model (its context
	// window, output limit and prices), by "provider/model" or model name.
	ModelSettings map[string]ModelSettings `json:"modelSettings,omitempty"`
	// Skills configures skills and skill proposals.
	Skills Skills `json:"skills,omitzero"`
	// WebSearch is the search service of the web_search tool; without
	// it the tool is not offered.
	WebSearch *WebSearch `json:"webSearch,omitempty"`
	// Store and LeaseTTL choose the session store (see store.go).
	Store    string `json:"store,omitempty"`
	LeaseTTL string `json:"leaseTTL,omitempty"`
	// Server configures `mx-claw serve` (server.go).
	Server ServerSettings `json:"server,omitzero"`

	// path is the file the config was loaded from; exists says whether it
	// was there.
	path   string
	exists bool
}

// ModelSettings are what the user says of a model, over the built-in
// catalog: its context window, output limit, USD prices per million
// tokens and whether it reads images.
type ModelSettings struct {
	ContextWindow    *int     `json:"contextWindow,omitempty"`
	MaxOutputTokens  *int     `json:"maxOutputTokens,omitempty"`
	InputPrice       *float64 `json:"inputPrice,omitempty"`
	CachedInputPrice *float64 `json:"cachedInputPrice,omitempty"`
	OutputPrice      *float64 `json:"outputPrice,omitempty"`
	// Images says whether the model reads images (attached pictures,
	// read_file of an image); it overrides the catalog's flag.
	Images *bool `json:"images,omitempty"`
}

// WebSearch names the web_search tool's backend: "searxng" with the URL
// of an instance (its JSON API), or "brave" (the Brave Search API; URL
// optional). A key, where the backend needs one, comes from the secret
// chain under the name "websearch" (MX_CLAW_API_KEY_WEBSEARCH, or
// provider:websearch in a store), never from this file.
type WebSearch struct {
	Backend string `json:"backend"`
	URL     string `json:"url,omitempty"`
}

// Skills configures skills: how many the index of a new session lists,
// and whether the model is asked to propose skills from finished turns.
type Skills struct {
	// Proposals, if false, turns skill proposals off; absent means on.
	Proposals *bool `json:"proposals,omitempty"`
	// MinProposalCalls is how many tool calls a turn needs to be learned
	// from; 0 means the default (4).
	MinProposalCalls int `json:"minProposalCalls,omitempty"`
	// IndexSize caps the skills a system prompt lists; 0 means 30.
	IndexSize int `json:"indexSize,omitempty"`
}

// ProposalsOn reports whether skill proposals are on.
func (s Skills) ProposalsOn() bool { return s.Proposals == nil || *s.Proposals }

// Budget is the default spending cap of runs and sessions; zero fields
// are no cap. Flags of a run override the per-run ones.
type Budget struct {
	MaxTokens         int64   `json:"maxTokens,omitempty"`
	MaxCostUSD        float64 `json:"maxCostUsd,omitempty"`
	MaxTime           string  `json:"maxTime,omitempty"` // a Go duration, e.g. "10m"
	MaxSessionTokens  int64   `json:"maxSessionTokens,omitempty"`
	MaxSessionCostUSD float64 `json:"maxSessionCostUsd,omitempty"`
}

// Builtins returns the providers mx-claw knows without any configuration.
func Builtins() map[string]*Provider {
	return map[string]*Provider{
		"openai": {
			Name: "openai", Kind: KindBuiltin, BaseURL: "https://api.openai.com/v1",
			Model: "gpt-4.1", Models: []string{"gpt-4.1", "gpt-4.1-mini", "gpt-4o", "o4-mini"},
			RequiresAPIKey: true,
		},
		"deepseek": {
			Name: "deepseek", Kind: KindBuiltin, BaseURL: "https://api.deepseek.com/v1",
			Model: "deepseek-chat", Models: []string{"deepseek-chat", "deepseek-reasoner"},
			RequiresAPIKey: true,
		},
		"ollama": {
			Name: "ollama", Kind: KindBuiltin, BaseURL: "http://127.0.0.1:11434/v1",
			Model: "", Models: nil, RequiresAPIKey: false,
		},
	}
}

// Home returns the mx-claw home directory: $MX_CLAW_HOME, else ~/.mx-claw.
func Home() (string, error) {
	if h := os.Getenv("MX_CLAW_HOME"); h != "" {
		return filepath.Abs(h)
	}
	u, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find home directory (set MX_CLAW_HOME): %w", err)
	}
	return filepath.Join(u, ".mx-claw"), nil
}

// Load reads home/config.json. A missing file is not an error: the result
// holds the built-in providers and no active provider, and Exists reports
// false. A file that is not valid JSON, or is of a newer version, is an
// error naming the file; the file is never modified by Load.
func Load(home string) (*Config, error) {
	path := filepath.Join(home, FileName)
	c := &Config{Version: CurrentVersion, Providers: Builtins(), path: path}
	data, err := safefile.ReadFile(path, safefile.DefaultMax)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read config %s: %w", path, err)
	}
	var f Config
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, decodeError(path, data, err)
	}
	if f.Version > CurrentVersion {
		return nil, fmt.Errorf("config %s has version %d, newer than this mx-claw supports (%d); upgrade mx-claw", path, f.Version, CurrentVersion)
	}
	if f.Version < 1 {
		return nil, fmt.Errorf("config %s has no valid \"version\" (want %d)", path, CurrentVersion)
	}
	c.ActiveProvider = f.ActiveProvider
	c.MaxIterations = f.MaxIterations
	c.CompactThreshold = f.CompactThreshold
	c.ModelSettings = f.ModelSettings
	c.Budget = f.Budget
	c.WebSearch = f.WebSearch
	if ws := f.WebSearch; ws != nil {
		switch ws.Backend {
		case "searxng", "brave":
		default:
			return nil, fmt.Errorf("config %s: webSearch.backend %q: want \"searxng\" or \"brave\"", path, ws.Backend)
		}
		if ws.Backend == "searxng" && ws.URL == "" {
			return nil, fmt.Errorf("config %s: webSearch: a searxng backend needs \"url\", the instance's address", path)
		}
	}
	c.Skills = f.Skills
	if f.Skills.MinProposalCalls < 0 || f.Skills.IndexSize < 0 {
		return nil, fmt.Errorf("config %s: skills values must not be negative", path)
	}
	c.StreamIdleTimeout = f.StreamIdleTimeout
	if f.StreamIdleTimeout != "" {
		if d, err := time.ParseDuration(f.StreamIdleTimeout); err != nil || d <= 0 {
			return nil, fmt.Errorf("config %s: streamIdleTimeout %q is not a positive duration like \"2m\"", path, f.StreamIdleTimeout)
		}
	}
	if f.Budget.MaxTime != "" {
		if d, err := time.ParseDuration(f.Budget.MaxTime); err != nil || d < 0 {
			return nil, fmt.Errorf("config %s: budget.maxTime %q is not a duration like \"10m\"", path, f.Budget.MaxTime)
		}
	}
	if f.Budget.MaxTokens < 0 || f.Budget.MaxCostUSD < 0 || f.Budget.MaxSessionTokens < 0 || f.Budget.MaxSessionCostUSD < 0 {
		return nil, fmt.Errorf("config %s: budget values must not be negative", path)
	}
	if c.CompactThreshold < 0 || c.CompactThreshold >= 1 {
		return nil, fmt.Errorf("config %s: compactThreshold %v must be between 0 and 1", path, c.CompactThreshold)
	}
	if err := c.loadStore(f); err != nil {
		return nil, err
	}
	for id, m := range f.ModelSettings {
		if m.ContextWindow != nil && *m.ContextWindow < 1000 {
			return nil, fmt.Errorf("config %s: modelSettings[%q].contextWindow %d is too small (at least 1000)", path, id, *m.ContextWindow)
		}
	}
	for name, p := range f.Providers {
		if p == nil {
			return nil, fmt.Errorf("config %s: provider %q is null", path, name)
		}
		p.Name = name
		p.APIKey = "" // never trusted from disk
		if p.Kind == "" {
			p.Kind = KindCustom
			if _, ok := c.Providers[name]; ok {
				p.Kind = KindBuiltin
			}
		}
		c.Providers[name] = p
	}
	c.exists = true
	return c, nil
}

// Path returns the file the config belongs to.
func (c *Config) Path() string { return c.path }

// Exists reports whether the config file existed when it was loaded.
func (c *Config) Exists() bool { return c.exists }

// Save writes the config to its file atomically (a temporary file renamed
// over it) with mode 0600, creating the home directory with mode 0700. API
// keys are never written.
func (c *Config) Save() error {
	out := Config{Version: CurrentVersion, ActiveProvider: c.ActiveProvider, MaxIterations: c.MaxIterations,
		CompactThreshold: c.CompactThreshold, ModelSettings: c.ModelSettings, Budget: c.Budget, Skills: c.Skills, WebSearch: c.WebSearch,
		StreamIdleTimeout: c.StreamIdleTimeout, Store: c.Store, LeaseTTL: c.LeaseTTL, Server: c.Server,
		Providers: make(map[string]*Provider, len(c.Providers))}
	for name, p := range c.Providers {
		cp := *p
		cp.APIKey = ""
		out.Providers[name] = &cp
	}
	data, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(c.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, tempPattern())
	if err != nil {
		return fmt.Errorf("save config: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("save config: %w", err)
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("save config: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("save config: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save config: %w", err)
	}
	if err := os.Rename(tmp.Name(), c.path); err != nil {
		return fmt.Errorf("save config: %w", err)
	}
	c.exists = true
	return nil
}

// ModelRef is a resolved "provider/model" choice.
type ModelRef struct {
	Provider *Provider
	Model    string
}

// String returns the model id, "provider/model".
func (r ModelRef) String() string { return r.Provider.Name + "/" + r.Model }

// Resolve turns a model id into a provider and model. id may be
// "provider/model", a bare model name of the active provider, or "" for the
// active provider's default model.
func (c *Config) Resolve(id string) (ModelRef, error) {
	if id == "" {
		if c.ActiveProvider == "" {
			if !c.exists {
				return ModelRef{}, fmt.Errorf("no model is configured (%s does not exist); configure a provider with `mx-claw model configure NAME --base-url URL --models MODEL --default MODEL`, or pass --model provider/model", c.path)
			}
			return ModelRef{}, fmt.Errorf("no active provider in %s; pass --model provider/model or set \"activeProvider\"", c.path)
		}
		p, ok := c.Providers[c.ActiveProvider]
		if !ok {
			return ModelRef{}, fmt.Errorf("active provider %q is not defined in %s", c.ActiveProvider, c.path)
		}
		if p.Model == "" {
			return ModelRef{}, fmt.Errorf("provider %s has no default model; set one with `mx-claw model default %s/MODEL`", p.Name, p.Name)
		}
		return ModelRef{Provider: p, Model: p.Model}, nil
	}
	provName, model, ok := strings.Cut(id, "/")
	if !ok {
		if c.ActiveProvider == "" {
			return ModelRef{}, fmt.Errorf("unknown model %q: use the form provider/model (providers: %s)", id, strings.Join(c.ProviderNames(), ", "))
		}
		provName, model = c.ActiveProvider, id
	}
	p, found := c.Providers[provName]
	if !found {
		return ModelRef{}, fmt.Errorf("unknown provider %q in model %q (providers: %s)", provName, id, strings.Join(c.ProviderNames(), ", "))
	}
	if model == "" {
		return ModelRef{}, fmt.Errorf("model %q names no model after the provider", id)
	}
	if !slices.Contains(p.Models, model) {
		known := "none"
		if len(p.Models) > 0 {
			known = strings.Join(p.Models, ", ")
		}
		return ModelRef{}, fmt.Errorf("unknown model %q for provider %s (known: %s); add it with `mx-claw model add-model %s %s`", model, p.Name, known, p.Name, model)
	}
	return ModelRef{Provider: p, Model: model}, nil
}

// ProviderNames returns the providers' names, sorted.
func (c *Config) ProviderNames() []string {
	names := make([]string, 0, len(c.Providers))
	for n := range c.Providers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
