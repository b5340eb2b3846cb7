package modelcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/secret"
)

// maxErrorDetail is how much of a failed /models answer is shown.
const maxErrorDetail = 1000

// maxModelsBody caps a /models answer.
const maxModelsBody = 8 << 20

// Discover asks an OpenAI-compatible server for its models: GET
// {baseURL}/models, with "Authorization: Bearer key" when key is set. It
// accepts {"data":[{"id":...}]} and {"models":[{"id"|"name":...}]}. No
// error it returns holds the key.
func Discover(ctx context.Context, client *http.Client, baseURL, key string) ([]string, error) {
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	url := strings.TrimRight(baseURL, "/") + "/models"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("model discovery: %s", secret.Redact(err.Error(), key))
	}
	req.Header.Set("Accept", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("model discovery: %s", secret.Redact(err.Error(), key))
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// Redact the whole start of the body before cutting it, so that a
		// key straddling the cut cannot leave a piece behind.
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, &DiscoveryError{Status: resp.StatusCode, Body: cut(secret.Redact(string(data), key), maxErrorDetail)}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxModelsBody+1))
	if err != nil {
		return nil, fmt.Errorf("model discovery: read %s: %s", url, secret.Redact(err.Error(), key))
	}
	if len(data) > maxModelsBody {
		return nil, fmt.Errorf("model discovery: %s answered more than %d MiB", url, maxModelsBody>>20)
	}
	return parseModels(url, data)
}

type modelEntry struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// parseModels reads a model list. Its errors quote no part of the body.
func parseModels(url string, data []byte) ([]string, error) {
	var payload struct {
		Data   *[]modelEntry `json:"data"`
		Models *[]modelEntry `json:"models"`
	}
	if err := json.Unmarshal(data, &payload); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, fmt.Errorf("model discovery: %s did not answer with JSON (error at byte %d)", url, syn.Offset)
		}
		return nil, fmt.Errorf("model discovery: %s did not answer with a model list", url)
	}
	var entries []modelEntry
	switch {
	case payload.Data != nil:
		entries = *payload.Data
	case payload.Models != nil:
		entries = *payload.Models
	default:
		return nil, fmt.Errorf("model discovery: %s did not answer with a model list (no \"data\")", url)
	}
	var out []string
	for _, e := range entries {
		id := e.ID
		if id == "" {
			id = e.Name
		}
		if config.ValidateModelName(id) == nil && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

// cut returns the first n bytes of s, ending on a whole character.
func cut(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Refresh adds the models the provider's /models lists to its model list
// (the active provider's when name is ""). Built-in and hand-added models
// are kept. A provider that is not ready is skipped with a line saying so.
func (h *Handler) Refresh(ctx context.Context, name string) error {
	if name == "" {
		if name = h.Config.ActiveProvider; name == "" {
			return usagef("no active provider; name one: `%s refresh PROVIDER`", h.prefix())
		}
	}
	p, err := h.provider(name)
	if err != nil {
		return err
	}
	key, _, err := h.key(ctx, name)
	if err != nil {
		return err
	}
	if config.Ready(p, key) != nil {
		h.printf("Refresh skipped: %s needs configuration\n", name)
		return nil
	}
	found, err := Discover(ctx, h.HTTP, p.BaseURL, key)
	if err != nil {
		return err
	}
	var added []string
	for _, m := range found {
		if !slices.Contains(p.Models, m) {
			added = append(added, m)
		}
	}
	if len(added) == 0 {
		h.printf("%s: /models lists %d models, none new (%d known).\n", name, len(found), len(p.Models))
		return nil
	}
	err = h.Config.Update(func(c *config.Config) error {
		np := *c.Providers[name]
		np.Models = append(slices.Clone(np.Models), added...)
		c.Providers[name] = &np
		return nil
	})
	if err != nil {
		return err
	}
	h.printf("%s: added %d models from /models: %s\n", name, len(added), strings.Join(added, ", "))
	return nil
}
