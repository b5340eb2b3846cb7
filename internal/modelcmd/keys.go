package modelcmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/secret"
)

func isNotFound(err error) bool { return errors.Is(err, secret.ErrNotFound) }

// AddModel adds a model name to a provider's list by hand; it becomes the
// provider's default when it had none.
func (h *Handler) AddModel(ctx context.Context, provider, model string) error {
	p, err := h.provider(provider)
	if err != nil {
		return err
	}
	if err := config.ValidateModelName(model); err != nil {
		return &UsageError{Err: err}
	}
	if slices.Contains(p.Models, model) {
		h.printf("%s/%s is already listed.\n", provider, model)
		return nil
	}
	setDefault := p.Model == ""
	err = h.Config.Update(func(c *config.Config) error {
		np := *c.Providers[provider]
		np.Models = append(slices.Clone(np.Models), model)
		if setDefault {
			np.Model = model
		}
		c.Providers[provider] = &np
		return nil
	})
	if err != nil {
		return err
	}
	h.printf("Added %s/%s.\n", provider, model)
	if setDefault {
		h.printf("It is %s's default model.\n", provider)
	}
	return nil
}

// SetAPIKey stores a provider's API key. With key "" it asks for it
// (hidden); the old form with the key as an argument still works.
func (h *Handler) SetAPIKey(ctx context.Context, provider, key string) error {
	p, err := h.provider(provider)
	if err != nil {
		return err
	}
	if h.Secrets == nil {
		return fmt.Errorf("set the API key of %s: no secret store", provider)
	}
	if key = strings.TrimSpace(key); key == "" {
		if h.Prompt == nil {
			return usagef("no key given and no one to ask; `%s set %s api-key` asks for it on a terminal", h.prefix(), provider)
		}
		k, err := h.Prompt.Secret(ctx, fmt.Sprintf("API Key for %s (input hidden):", provider))
		if err != nil {
			return err
		}
		if key = strings.TrimSpace(k); key == "" {
			h.printf("No key entered; nothing changed.\n")
			return nil
		}
	}
	backend, err := h.Secrets.Set(ctx, provider, key)
	if err != nil {
		return err
	}
	h.printf("Stored the API key of %s in %s.\n", provider, backend)
	h.printKeyState(ctx, p, backend)
	return nil
}
