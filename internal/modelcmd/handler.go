package modelcmd

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mx-claw/mx-claw/internal/config"
)

// Secrets is the part of the secret chain (secret.Chain) the handlers use.
type Secrets interface {
	// Get returns a provider's key and its source, or an error.
	Get(ctx context.Context, provider string) (value, source string, err error)
	// Set stores a provider's key and returns the store used.
	Set(ctx context.Context, provider, value string) (backend string, err error)
	// Delete removes a provider's key from the writable stores.
	Delete(ctx context.Context, provider string) error
	// Describe names the store keys are written to.
	Describe() string
}

// Session is the session whose model the session-only commands change.
type Session interface {
	// Model returns the session's model id, "provider/model", or "".
	Model() string
	// SetModel makes id the session's model.
	SetModel(ctx context.Context, id string) error
}

// Option is one entry of a Select menu.
type Option struct {
	// Value is returned when the option is chosen.
	Value string
	// Label is what the menu shows.
	Label string
	// Current marks the option chosen when the user just confirms.
	Current bool
}

// Prompter asks the user. Every method returns ErrCancelled when the user
// backs out.
type Prompter interface {
	// Select shows title and options and returns the chosen Value.
	Select(ctx context.Context, title string, options []Option) (string, error)
	// Input asks for a line of text and returns it trimmed; an empty
	// answer returns def.
	Input(ctx context.Context, label, def string) (string, error)
	// Secret asks for a line without echoing it; "" if the user entered
	// nothing.
	Secret(ctx context.Context, label string) (string, error)
	// Confirm asks a yes/no question; an empty answer returns def.
	Confirm(ctx context.Context, question string, def bool) (bool, error)
}

// Handler runs the model commands against one config snapshot.
type Handler struct {
	// Config is the process's snapshot; changes are saved through
	// config.Update, which updates it at once.
	Config *config.Config
	// Secrets is the secret chain.
	Secrets Secrets
	// Prompt asks the user; nil when there is no one to ask (a script):
	// commands that need an answer then fail with a UsageError.
	Prompt Prompter
	// Session is the session the session-only commands change; nil when
	// there is none (they then fail with a UsageError).
	Session Session
	// Out receives the commands' output.
	Out io.Writer
	// HTTP sends the /models requests; a client with a 30 s timeout if
	// nil.
	HTTP *http.Client
	// Prefix is how the user spells the command, for hints: "/model" in
	// the REPL, "mx-claw model" on the command line (the default).
	Prefix string
	// Probe, if set, tests a provider's settings with one small model
	// request before the wizard saves them; its errors must not hold the
	// key.
	Probe func(ctx context.Context, baseURL, key, model string) error
}

func (h *Handler) prefix() string {
	if h.Prefix == "" {
		return "mx-claw model"
	}
	return h.Prefix
}

func (h *Handler) printf(format string, args ...any) {
	fmt.Fprintf(h.Out, format, args...)
}

// Usage returns the list of model commands, spelled with the handler's
// prefix.
func (h *Handler) Usage() string {
	p := h.prefix()
	return strings.Join([]string{
		p + "                             configure a provider (wizard) and choose the default model",
		p + " configure [PROVIDER]        configure one provider",
		p + " switch                      change this session's model (same provider)",
		p + " MODEL                       use MODEL in this session",
		p + " use PROVIDER MODEL          use PROVIDER/MODEL in this session",
		p + " pick                        pick any ready provider's model for this session",
		p + " default PROVIDER/MODEL      change the default model (saved)",
		p + " status                      show providers, models and key status",
		p + " list                        list all models",
		p + " refresh [PROVIDER]          add the models the provider's /models lists",
		p + " add-model PROVIDER MODEL    add a model name by hand",
		p + " set PROVIDER api-key        store the provider's API key (hidden input)",
	}, "\n") + "\n"
}

// Run dispatches a command line as the REPL receives it after "/model":
// no arguments runs the wizard, a word that is no command is a model for
// this session.
func (h *Handler) Run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return h.Wizard(ctx)
	}
	arity := func(min, max int, form string) error {
		if n := len(args) - 1; n < min || n > max {
			return usagef("usage: %s %s", h.prefix(), form)
		}
		return nil
	}
	switch args[0] {
	case "configure":
		if err := arity(0, 1, "configure [PROVIDER]"); err != nil {
			return err
		}
		if len(args) == 1 {
			return h.Wizard(ctx)
		}
		return h.Configure(ctx, args[1])
	case "switch":
		if err := arity(0, 0, "switch"); err != nil {
			return err
		}
		return h.Switch(ctx)
	case "pick":
		if err := arity(0, 0, "pick"); err != nil {
			return err
		}
		return h.Pick(ctx)
	case "use":
		if err := arity(2, 2, "use PROVIDER MODEL"); err != nil {
			return err
		}
		return h.Use(ctx, args[1], args[2])
	case "default":
		if err := arity(1, 2, "default PROVIDER/MODEL"); err != nil {
			return err
		}
		return h.SetDefault(ctx, strings.Join(args[1:], "/"))
	case "status":
		if err := arity(0, 0, "status"); err != nil {
			return err
		}
		return h.Status(ctx)
	case "list":
		if err := arity(0, 0, "list"); err != nil {
			return err
		}
		return h.List(ctx)
	case "refresh":
		if err := arity(0, 1, "refresh [PROVIDER]"); err != nil {
			return err
		}
		return h.Refresh(ctx, strings.Join(args[1:], ""))
	case "add-model":
		if err := arity(2, 2, "add-model PROVIDER MODEL"); err != nil {
			return err
		}
		return h.AddModel(ctx, args[1], args[2])
	case "set":
		if len(args) < 3 || len(args) > 4 || args[2] != "api-key" {
			return usagef("usage: %s set PROVIDER api-key", h.prefix())
		}
		key := ""
		if len(args) == 4 {
			key = args[3]
			h.printf("Note: a key typed on the command line can stay in your history; `%s set %s api-key` asks for it hidden.\n", h.prefix(), args[1])
		}
		return h.SetAPIKey(ctx, args[1], key)
	case "help":
		h.printf("%s", h.Usage())
		return nil
	}
	if len(args) == 1 && !strings.HasPrefix(args[0], "-") {
		return h.UseModel(ctx, args[0])
	}
	return usagef("unknown model command %q\n%s", strings.Join(args, " "), strings.TrimRight(h.Usage(), "\n"))
}

// provider returns the named provider or a UsageError listing the known
// ones.
func (h *Handler) provider(name string) (*config.Provider, error) {
	p, ok := h.Config.Providers[name]
	if !ok {
		return nil, usagef("unknown provider %q (providers: %s)", name, strings.Join(h.Config.ProviderNames(), ", "))
	}
	return p, nil
}

// key returns the provider's key ("" without one), its source, and the
// error of a broken store (never holding the key).
func (h *Handler) key(ctx context.Context, provider string) (value, source string, err error) {
	if h.Secrets == nil {
		return "", "", nil
	}
	v, src, err := h.Secrets.Get(ctx, provider)
	if err != nil {
		if isNotFound(err) {
			return "", "", nil
		}
		return "", "", err
	}
	return v, src, nil
}

// ready reports why a provider cannot serve requests (config.Ready with
// its current key), nil if it can.
func (h *Handler) ready(ctx context.Context, p *config.Provider) error {
	k, _, err := h.key(ctx, p.Name)
	if err != nil {
		return err
	}
	return config.Ready(p, k)
}

// splitModelID splits "provider/model"; ok is false without a provider.
func splitModelID(id string) (provider, model string, ok bool) {
	return strings.Cut(id, "/")
}
