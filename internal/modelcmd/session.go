package modelcmd

import (
	"context"
	"slices"
	"strings"

	"github.com/mx-claw/mx-claw/internal/config"
)

func (h *Handler) noSession(cmd string) error {
	return usagef("%s changes the model of a session, and there is none here; `%s default PROVIDER/MODEL` changes the default model", cmd, h.prefix())
}

// sessionModel returns the session's provider and model: the session's
// own, else the default.
func (h *Handler) sessionModel() (provider, model string, err error) {
	if id := h.Session.Model(); id != "" {
		if p, m, ok := splitModelID(id); ok {
			return p, m, nil
		}
	}
	ref, err := h.Config.Resolve("")
	if err != nil {
		return "", "", &UsageError{Err: err}
	}
	return ref.Provider.Name, ref.Model, nil
}

// Switch shows the session provider's models, marking the session's
// current one, and makes the chosen one the session's model (this session
// only; the default and the provider stay).
func (h *Handler) Switch(ctx context.Context) error {
	if h.Session == nil {
		return h.noSession("switch")
	}
	if h.Prompt == nil {
		return usagef("switch needs interactive input; use `%s use PROVIDER MODEL`", h.prefix())
	}
	provName, current, err := h.sessionModel()
	if err != nil {
		return err
	}
	p, err := h.provider(provName)
	if err != nil {
		return err
	}
	if len(p.Models) == 0 {
		return usagef("provider %s has no models; add one with `%s add-model %s MODEL`", provName, h.prefix(), provName)
	}
	// The session's model, not the provider's default, is current: a
	// switch earlier in the session must show as such.
	if !slices.Contains(p.Models, current) {
		current = p.Model
	}
	opts := make([]Option, 0, len(p.Models))
	for _, m := range p.Models {
		o := Option{Value: m, Label: m}
		if m == current {
			o.Label, o.Current = m+" · current", true
		}
		opts = append(opts, o)
	}
	chosen, err := h.Prompt.Select(ctx, "Select a "+provName+" model for this session", opts)
	if err != nil {
		return err
	}
	return h.Use(ctx, provName, chosen)
}

// Use makes provider/model the session's model. The provider must be the
// session's: changing providers is a change of default.
func (h *Handler) Use(ctx context.Context, provider, model string) error {
	if h.Session == nil {
		return h.noSession("use")
	}
	cur, _, err := h.sessionModel()
	if err != nil {
		return err
	}
	p, err := h.provider(provider)
	if err != nil {
		return err
	}
	if provider != cur {
		// The article's wording, capitalised as it is shown to users.
		return usagef("Temporary model switch cannot change provider (%s -> %s). Use %s default to change the default provider.", cur, provider, h.prefix())
	}
	if err := h.knownModel(p, model); err != nil {
		return err
	}
	id := provider + "/" + model
	if err := h.Session.SetModel(ctx, id); err != nil {
		return err
	}
	h.printf("Session model: %s (this session only)\n", id)
	if err := h.ready(ctx, p); err != nil {
		h.printf("Note: %v\n", err)
	}
	return nil
}

// UseModel is `/model MODEL`: MODEL is "provider/model" or a model of the
// session's provider.
func (h *Handler) UseModel(ctx context.Context, id string) error {
	if h.Session == nil {
		return h.noSession("choosing a model")
	}
	provider, model, ok := splitModelID(id)
	if !ok {
		var err error
		if provider, _, err = h.sessionModel(); err != nil {
			return err
		}
		model = id
	}
	return h.Use(ctx, provider, model)
}

// SetDefault makes id ("provider/model", or a model of the active
// provider) the default model and saves it; the session, if any, follows.
func (h *Handler) SetDefault(ctx context.Context, id string) error {
	provider, model, ok := splitModelID(id)
	if !ok {
		if h.Config.ActiveProvider == "" {
			return usagef("name the model as PROVIDER/MODEL (providers: %s)", strings.Join(h.Config.ProviderNames(), ", "))
		}
		provider, model = h.Config.ActiveProvider, id
	}
	p, err := h.provider(provider)
	if err != nil {
		return err
	}
	if err := h.knownModel(p, model); err != nil {
		return err
	}
	err = h.Config.Update(func(c *config.Config) error {
		np := *c.Providers[provider]
		np.Model = model
		c.Providers[provider] = &np
		c.ActiveProvider = provider
		return nil
	})
	if err != nil {
		return err
	}
	id = provider + "/" + model
	h.printf("Default model: %s\n", id)
	if h.Session != nil {
		if err := h.Session.SetModel(ctx, id); err != nil {
			return err
		}
		h.printf("Session model: %s\n", id)
	}
	if err := h.ready(ctx, h.Config.Providers[provider]); err != nil {
		h.printf("Note: %v\n", err)
	}
	return nil
}

func (h *Handler) knownModel(p *config.Provider, model string) error {
	if model == "" {
		return usagef("no model named for provider %s", p.Name)
	}
	if slices.Contains(p.Models, model) {
		return nil
	}
	known := "none"
	if len(p.Models) > 0 {
		known = strings.Join(p.Models, ", ")
	}
	return usagef("unknown model %q for provider %s (known: %s); add it with `%s add-model %s %s`", model, p.Name, known, h.prefix(), p.Name, model)
}
