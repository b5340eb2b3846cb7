package config

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"unicode"
)

// Clone returns a deep copy of the config, bound to the same file.
func (c *Config) Clone() *Config {
	cp := *c
	cp.Providers = make(map[string]*Provider, len(c.Providers))
	for name, p := range c.Providers {
		pc := *p
		pc.Models = slices.Clone(p.Models)
		cp.Providers[name] = &pc
	}
	return &cp
}

// Update applies change to a copy of the config, saves the copy and only
// then makes it the snapshot: if change or Save fails, neither the file nor
// the snapshot changes. It is the one way mx-claw edits its config.
//
// Update is not safe for concurrent use with itself or with readers of the
// snapshot; a process edits its config from one goroutine.
func (c *Config) Update(change func(*Config) error) error {
	next := c.Clone()
	if err := change(next); err != nil {
		return err
	}
	if err := next.Save(); err != nil {
		return err
	}
	c.Version, c.ActiveProvider, c.MaxIterations, c.exists = next.Version, next.ActiveProvider, next.MaxIterations, next.exists
	c.Providers = maps.Clone(next.Providers)
	return nil
}

// ValidateProviderName checks a new provider's name: a letter or digit,
// then letters, digits, '.', '_' or '-', at most 64 in all (it becomes part
// of model ids, key names and environment variables).
func ValidateProviderName(name string) error {
	if name == "" {
		return errors.New("the provider name is empty")
	}
	if len(name) > 64 {
		return fmt.Errorf("provider name %q is longer than 64 characters", name)
	}
	for i, r := range name {
		ok := r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || (i > 0 && strings.ContainsRune("._-", r)))
		if !ok {
			return fmt.Errorf("provider name %q: use letters, digits, '.', '_' and '-' (starting with a letter or digit)", name)
		}
	}
	return nil
}

// ValidateModelName checks a model name: not empty, at most 200 bytes, no
// spaces, commas or control characters.
func ValidateModelName(model string) error {
	if model == "" {
		return errors.New("the model name is empty")
	}
	if len(model) > 200 {
		return fmt.Errorf("model name %.40q... is longer than 200 bytes", model)
	}
	for _, r := range model {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == ',' {
			return fmt.Errorf("model name %q has a space, comma or control character", model)
		}
	}
	return nil
}

// ParseModelList splits "a, b,c" into model names, dropping empty items and
// repeats and keeping the order.
func ParseModelList(s string) []string {
	var out []string
	for _, m := range strings.Split(s, ",") {
		if m = strings.TrimSpace(m); m != "" && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// NormalizeBaseURL checks a provider's base URL and returns it without a
// trailing slash. It must be http or https with a host, and carry no user
// name, password, query or fragment (credentials belong in the secret
// store, never in config.json).
func NormalizeBaseURL(raw string) (string, error) {
	s := strings.TrimRight(strings.TrimSpace(raw), "/")
	if s == "" {
		return "", errors.New("the base URL is empty")
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "", errors.New("the base URL is not a valid URL")
	case u.User != nil:
		// Not echoed: it holds a password or token.
		return "", errors.New("the base URL must not hold a user name or password; give the API key separately")
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("base URL %q must start with http:// or https://", s)
	case u.Host == "":
		return "", fmt.Errorf("base URL %q has no host", s)
	case u.RawQuery != "" || u.Fragment != "":
		return "", fmt.Errorf("base URL %q must not have a query or fragment", u.Scheme+"://"+u.Host+u.Path)
	}
	return s, nil
}
