package modelcmd

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/secret"
)

// ConfigureInput is everything configure sets, collected before the one
// save.
type ConfigureInput struct {
	// Provider is the provider's name; a new name makes a custom provider.
	Provider string
	// BaseURL is the OpenAI-compatible API root, e.g.
	// https://api.openai.com/v1.
	BaseURL string
	// Models are the model names offered for the provider.
	Models []string
	// Default is the provider's default model; the first of Models if "".
	Default string
	// APIKey is stored in the secret chain; "" keeps the stored key.
	APIKey string
	// NoAPIKey says the provider needs no key; a stored key is deleted.
	NoAPIKey bool
	// Overwrite allows replacing an already configured provider.
	Overwrite bool
}

// newProviderChoice is the wizard's menu value for a new provider.
const newProviderChoice = "\x00new"

// Wizard is `/model` without arguments: pick a provider, then configure
// it (see Configure).
func (h *Handler) Wizard(ctx context.Context) error {
	if h.Prompt == nil {
		return usagef("the model wizard needs interactive input; configure non-interactively with `%s configure NAME --base-url URL --models a,b --default a`", h.prefix())
	}
	var opts []Option
	for _, name := range h.orderedProviders() {
		p := h.Config.Providers[name]
		state := "not configured"
		if p.Configured {
			state = "configured"
		}
		opts = append(opts, Option{Value: name, Label: fmt.Sprintf("%s (%s)", name, state), Current: name == h.Config.ActiveProvider})
	}
	opts = append(opts, Option{Value: newProviderChoice, Label: "Add a custom provider"})
	name, err := h.Prompt.Select(ctx, "Select a model provider", opts)
	if err != nil {
		return err
	}
	if name == newProviderChoice {
		if name, err = h.Prompt.Input(ctx, "Provider name", ""); err != nil {
			return err
		}
		if err := config.ValidateProviderName(name); err != nil {
			return &UsageError{Err: err}
		}
	}
	return h.Configure(ctx, name)
}

// Configure asks for one provider's settings: after confirming when the
// provider is already configured, its base URL, its API key (hidden; empty
// keeps the stored one), its models — picked from the list the server
// gives, else typed — and the default model. With a Probe it then tests
// them with one small request, and on failure offers to change them. It
// asks again on an empty or bad answer rather than giving up. Then it
// saves everything at once (ConfigureWith). Cancelling at any step saves
// nothing.
func (h *Handler) Configure(ctx context.Context, name string) error {
	if h.Prompt == nil {
		return usagef("configuring %s needs interactive input; give the settings with `%s configure %s --base-url URL --models a,b --default a`", name, h.prefix(), name)
	}
	p, exists := h.Config.Providers[name]
	if !exists {
		if err := config.ValidateProviderName(name); err != nil {
			return &UsageError{Err: err}
		}
		p = &config.Provider{Name: name, Kind: config.KindCustom}
	}
	in := ConfigureInput{Provider: name}
	if exists && p.Configured {
		ok, err := h.Prompt.Confirm(ctx, fmt.Sprintf("Provider %s is already configured. Overwrite its settings?", name), false)
		if err != nil {
			return err
		}
		if !ok {
			h.printf("Nothing changed.\n")
			return nil
		}
		in.Overwrite = true
	}
	stored, _, err := h.key(ctx, name)
	if err != nil {
		return err
	}
	w := wizard{h: h, p: p, stored: stored, url: p.BaseURL, models: p.Models, def: p.Model}
	for {
		if err := w.ask(ctx); err != nil {
			return err
		}
		in.BaseURL, in.APIKey, in.Models, in.Default = w.url, w.typedKey, w.models, w.def
		ok, err := w.test(ctx)
		if err != nil {
			return err
		}
		if ok {
			return h.ConfigureWith(ctx, in)
		}
	}
}

// wizard holds the answers of Configure so far; each round starts from
// them.
type wizard struct {
	h        *Handler
	p        *config.Provider
	stored   string // the key stored before
	url      string
	typedKey string // the key typed in this wizard
	models   []string
	def      string
}

// key is the key the settings would use.
func (w *wizard) key() string {
	if w.typedKey != "" {
		return w.typedKey
	}
	return w.stored
}

// ask asks for the base URL, the key, the models and the default model,
// each until the answer is usable.
func (w *wizard) ask(ctx context.Context) error {
	h := w.h
	for {
		u, err := h.Prompt.Input(ctx, "Base URL", w.url)
		if err != nil {
			return err
		}
		if u, err = config.NormalizeBaseURL(u); err != nil {
			h.printf("%v; try again (Esc or Ctrl-C cancels).\n", err)
			continue
		}
		w.url = u
		break
	}
	if err := w.askKey(ctx); err != nil {
		return err
	}
	return w.askModels(ctx)
}

// askKey asks for the API key, hidden, until one is given when the
// provider needs one.
func (w *wizard) askKey(ctx context.Context) error {
	h, name := w.h, w.p.Name
	needs := w.p.Kind == config.KindBuiltin && w.p.RequiresAPIKey
	label := fmt.Sprintf("API Key for %s (input hidden", name)
	switch {
	case w.typedKey != "":
		label += "; empty keeps the one just typed"
	case w.stored != "":
		label += "; empty keeps the current one"
	case !needs:
		label += "; empty if none is needed"
	}
	label += "):"
	for {
		k, err := h.Prompt.Secret(ctx, label)
		if err != nil {
			return err
		}
		if k = strings.TrimSpace(k); k != "" {
			w.typedKey = k
		}
		if w.key() != "" || !needs {
			return nil
		}
		h.printf("Provider %s needs an API key (Esc or Ctrl-C cancels).\n", name)
	}
}

// askModels offers the models the server lists, or asks for their names
// when it lists none, and then the default one.
func (w *wizard) askModels(ctx context.Context) error {
	h := w.h
	listed, err := h.listModels(ctx, w.url, w.key())
	switch {
	case err == nil && len(listed) > 0:
		h.printf("%s lists %d models.\n", w.url, len(listed))
		w.models = listed
	case ctx.Err() != nil:
		return ctx.Err()
	default:
		if err != nil {
			h.printf("Could not list the models (%v); type their names.\n", err)
		}
		for {
			list, err := h.Prompt.Input(ctx, "Model names, comma-separated", strings.Join(w.models, ", "))
			if err != nil {
				return err
			}
			models := config.ParseModelList(list)
			if len(models) == 0 {
				h.printf("At least one model name is needed.\n")
				continue
			}
			var bad error
			for _, m := range models {
				if err := config.ValidateModelName(m); err != nil && bad == nil {
					bad = err
				}
			}
			if bad != nil {
				h.printf("%v; try again.\n", bad)
				continue
			}
			w.models = models
			break
		}
	}
	current := w.def
	if !slices.Contains(w.models, current) {
		current = w.models[0]
	}
	var opts []Option
	for _, m := range w.models {
		opts = append(opts, Option{Value: m, Label: m, Current: m == current})
	}
	def, err := h.Prompt.Select(ctx, "Select the default model", opts)
	if err != nil {
		return err
	}
	w.def = def
	return nil
}

// test sends one small request with the settings. It reports whether to
// save them: they work, or the user saves them anyway; false asks again.
func (w *wizard) test(ctx context.Context) (bool, error) {
	h := w.h
	if h.Probe == nil {
		return true, nil
	}
	h.printf("Testing %s with %s…\n", w.url, w.def)
	err := h.Probe(ctx, w.url, w.key(), w.def)
	if err == nil {
		h.printf("✓ %s answered.\n", w.url)
		return true, nil
	}
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	h.printf("The test request failed: %s\n", secret.Redact(err.Error(), w.key()))
	again, err := h.Prompt.Confirm(ctx, "Change the settings and try again?", true)
	if err != nil || again {
		return false, err
	}
	save, err := h.Prompt.Confirm(ctx, "Save them anyway?", false)
	if err != nil {
		return false, err
	}
	if !save {
		return false, ErrCancelled
	}
	return true, nil
}

// listModels asks the server for its models, with the handler's HTTP
// client.
func (h *Handler) listModels(ctx context.Context, url, key string) ([]string, error) {
	return Discover(ctx, h.HTTP, url, key)
}

// ConfigureWith validates in and applies it in one go: the key to the
// secret chain, then the provider, the active provider and its default
// model to the config (one save), then the session's model. Nothing is
// written if in is invalid. An already configured provider is replaced
// only with Overwrite.
func (h *Handler) ConfigureWith(ctx context.Context, in ConfigureInput) error {
	name := in.Provider
	old, exists := h.Config.Providers[name]
	if !exists {
		if err := config.ValidateProviderName(name); err != nil {
			return &UsageError{Err: err}
		}
	}
	baseURL, err := config.NormalizeBaseURL(in.BaseURL)
	if err != nil {
		return &UsageError{Err: err}
	}
	models := slices.Compact(slices.Clone(in.Models))
	if len(models) == 0 {
		return usagef("provider %s needs at least one model name", name)
	}
	for _, m := range models {
		if err := config.ValidateModelName(m); err != nil {
			return &UsageError{Err: err}
		}
	}
	def := in.Default
	if def == "" {
		def = models[0]
	}
	if !slices.Contains(models, def) {
		return usagef("default model %q is not one of the models (%s)", def, strings.Join(models, ", "))
	}
	if in.APIKey != "" && in.NoAPIKey {
		return usagef("give an API key or say the provider needs none, not both")
	}
	if exists && old.Configured && !in.Overwrite {
		return usagef("provider %s is already configured; confirm to overwrite it (on the command line: --overwrite)", name)
	}
	stored := ""
	if in.APIKey == "" && !in.NoAPIKey {
		if stored, _, err = h.key(ctx, name); err != nil {
			return err
		}
	}
	var requires bool
	switch {
	case in.NoAPIKey:
		requires = false
	case exists && old.Kind == config.KindBuiltin:
		requires = old.RequiresAPIKey
	default:
		// A custom provider needs the key it was given.
		requires = in.APIKey != "" || stored != ""
	}
	if requires && in.APIKey == "" && stored == "" {
		return usagef("provider %s needs an API key; nothing was saved", name)
	}

	var backend string
	switch {
	case in.APIKey != "":
		if h.Secrets == nil {
			return fmt.Errorf("configure %s: no secret store; nothing was saved", name)
		}
		if backend, err = h.Secrets.Set(ctx, name, in.APIKey); err != nil {
			return fmt.Errorf("configure %s (nothing was saved): %w", name, err)
		}
	case in.NoAPIKey && h.Secrets != nil:
		if err := h.Secrets.Delete(ctx, name); err != nil {
			return fmt.Errorf("configure %s (nothing was saved): %w", name, err)
		}
	}
	err = h.Config.Update(func(c *config.Config) error {
		p := &config.Provider{Name: name, Kind: config.KindCustom}
		if exists {
			cp := *c.Providers[name]
			p = &cp
		}
		p.BaseURL, p.Models, p.Model = baseURL, models, def
		p.RequiresAPIKey, p.Configured = requires, true
		c.Providers[name] = p
		c.ActiveProvider = name
		return nil
	})
	if err != nil {
		return fmt.Errorf("configure %s: %w", name, err)
	}
	id := name + "/" + def
	h.printf("Configured %s: %s, models %s.\n", name, baseURL, strings.Join(models, ", "))
	h.printf("Default model: %s\n", id)
	if h.Session != nil {
		if err := h.Session.SetModel(ctx, id); err != nil {
			return fmt.Errorf("configured %s, but the session's model was not changed: %w", name, err)
		}
		h.printf("Session model: %s\n", id)
	}
	h.printKeyState(ctx, h.Config.Providers[name], backend)
	return nil
}

// printKeyState prints the provider's key line, a note when a read-only
// source hides a key just stored in backend, and what is still missing.
func (h *Handler) printKeyState(ctx context.Context, p *config.Provider, backend string) {
	k, src, err := h.key(ctx, p.Name)
	switch {
	case err != nil:
		h.printf("API Key: unreadable: %v\n", err)
	case k != "":
		h.printf("API Key: [configured] (%s)\n", src)
		if backend != "" && src != backend {
			h.printf("Note: the key from %s is used before the one stored in %s.\n", src, backend)
		}
	case p.RequiresAPIKey:
		h.printf("API Key: not set\n")
	default:
		h.printf("API Key: not needed\n")
	}
	if err == nil {
		if err := config.Ready(p, k); err != nil {
			h.printf("Note: %v\n", err)
		} else {
			h.printf("%s is ready.\n", p.Name)
		}
	}
}

// orderedProviders returns the provider names, the active one first.
func (h *Handler) orderedProviders() []string {
	names := h.Config.ProviderNames()
	if i := slices.Index(names, h.Config.ActiveProvider); i > 0 {
		names = append(append([]string{names[i]}, names[:i]...), names[i+1:]...)
	}
	return names
}
