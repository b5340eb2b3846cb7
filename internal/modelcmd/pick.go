package modelcmd

import (
	"context"
	"strings"
)

// Pick is `/model` without arguments in the REPL: a menu of the models of
// every ready provider, the session's marked, and the chosen one becomes
// the session's model — across providers, since the user picks from
// configured ones by name. `/model default` is what persists a choice.
func (h *Handler) Pick(ctx context.Context) error {
	if h.Session == nil {
		return h.noSession("choosing a model")
	}
	if h.Prompt == nil {
		return usagef("picking a model needs interactive input; use `%s PROVIDER/MODEL`", h.prefix())
	}
	curProv, curModel, _ := h.sessionModel()
	current := curProv + "/" + curModel
	var opts []Option
	var notReady []string
	for _, name := range h.Config.ProviderNames() {
		p := h.Config.Providers[name]
		if err := h.ready(ctx, p); err != nil {
			if p.Configured {
				notReady = append(notReady, name)
			}
			continue
		}
		for _, m := range p.Models {
			id := name + "/" + m
			o := Option{Value: id, Label: id}
			if id == current {
				o.Label, o.Current = id+" · current", true
			}
			opts = append(opts, o)
		}
	}
	if len(opts) == 0 {
		return usagef("no provider is ready; `%s configure` sets one up", h.prefix())
	}
	if len(notReady) > 0 {
		h.printf("Not ready (no key or models; `%s status` says why): %s\n", h.prefix(), strings.Join(notReady, ", "))
	}
	chosen, err := h.Prompt.Select(ctx, "Select a model for this session (/model default saves one for all)", opts)
	if err != nil {
		return err
	}
	if err := h.Session.SetModel(ctx, chosen); err != nil {
		return err
	}
	h.printf("Session model: %s (this session only)\n", chosen)
	return nil
}
