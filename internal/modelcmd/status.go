package modelcmd

import (
	"context"
	"strings"

	"github.com/mx-claw/mx-claw/internal/config"
)

// Status prints the default and session models, where keys are stored,
// and per provider its base URL, models, key state (only ever
// "[configured]") and readiness.
func (h *Handler) Status(ctx context.Context) error {
	def := "none"
	if ref, err := h.Config.Resolve(""); err == nil {
		def = ref.String()
	}
	h.printf("Default model:  %s\n", def)
	if h.Session != nil {
		sm := h.Session.Model()
		if sm == "" {
			sm = "(the default)"
		}
		h.printf("Session model:  %s\n", sm)
	}
	if h.Secrets != nil {
		h.printf("Secret store:   %s\n", h.Secrets.Describe())
	}
	h.printf("Config:         %s\n", h.Config.Path())
	for _, name := range h.orderedProviders() {
		p := h.Config.Providers[name]
		tags := []string{p.Kind}
		if name == h.Config.ActiveProvider {
			tags = append(tags, "active")
		}
		h.printf("\n%s (%s)\n", name, strings.Join(tags, ", "))
		h.printf("  Base URL:  %s\n", orNone(p.BaseURL))
		models := orNone(strings.Join(p.Models, ", "))
		if p.Model != "" {
			models += " (default " + p.Model + ")"
		}
		h.printf("  Models:    %s\n", models)
		k, src, err := h.key(ctx, name)
		switch {
		case err != nil:
			h.printf("  API Key:   unreadable: %v\n", err)
		case k != "":
			h.printf("  API Key:   [configured] (%s)\n", src)
		case p.RequiresAPIKey:
			h.printf("  API Key:   not set\n")
		default:
			h.printf("  API Key:   not needed\n")
		}
		if err == nil {
			h.printf("  Status:    %s\n", readiness(p, k))
		}
	}
	return nil
}

func readiness(p *config.Provider, key string) string {
	if err := config.Ready(p, key); err != nil {
		return "needs configuration: " + err.Error()
	}
	return "ready"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// List prints every provider/model, the current one (the session's, else
// the default) marked "· current" and the default "· default".
func (h *Handler) List(ctx context.Context) error {
	def := ""
	if ref, err := h.Config.Resolve(""); err == nil {
		def = ref.String()
	}
	current := def
	if h.Session != nil && h.Session.Model() != "" {
		current = h.Session.Model()
	}
	for _, name := range h.orderedProviders() {
		p := h.Config.Providers[name]
		state := "ready"
		if err := h.ready(ctx, p); err != nil {
			state = "needs configuration"
		}
		h.printf("%s (%s)\n", name, state)
		if len(p.Models) == 0 {
			h.printf("  no models\n")
		}
		for _, m := range p.Models {
			id := name + "/" + m
			line := "  " + id
			if id == current {
				line += " · current"
			}
			if id == def && id != current {
				line += " · default"
			}
			h.printf("%s\n", line)
		}
	}
	return nil
}
