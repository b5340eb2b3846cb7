package server

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/secret"
)

// listModels serves GET /api/models: every model of every provider, ready
// or not (and why not), and the default.
func (s *Server) listModels(w http.ResponseWriter, r *http.Request) error {
	cfg := s.app.ConfigSnapshot()
	out := protocol.ModelList{Models: []protocol.ModelInfo{}}
	if ref, err := cfg.Resolve(""); err == nil {
		out.Default = ref.String()
	}
	for _, name := range cfg.ProviderNames() {
		p := cfg.Providers[name]
		st := s.providerStatus(r.Context(), p)
		for _, m := range p.Models {
			id := name + "/" + m
			out.Models = append(out.Models, protocol.ModelInfo{ID: id, Provider: name, Name: m,
				Ready: st.Ready, Problem: st.Problem, Default: id == out.Default})
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// providerStatus describes a provider and whether its key is found,
// without the key.
func (s *Server) providerStatus(ctx context.Context, p *config.Provider) protocol.ProviderStatus {
	st := protocol.ProviderStatus{Name: p.Name, Kind: p.Kind, BaseURL: p.BaseURL, Model: p.Model,
		Models: slices.Clone(p.Models), RequiresAPIKey: p.RequiresAPIKey, Configured: p.Configured}
	if st.Models == nil {
		st.Models = []string{}
	}
	key, source, err := s.app.Secrets.Get(ctx, p.Name)
	switch {
	case err == nil && key != "":
		st.KeyConfigured, st.KeySource = true, source
	case err != nil && !errors.Is(err, secret.ErrNotFound):
		st.Problem = "the key store cannot be read: " + err.Error()
	}
	if st.Problem == "" {
		if err := config.Ready(p, key); err != nil {
			st.Problem = err.Error()
		}
	}
	st.Ready = st.Problem == ""
	return st
}

// getSettings serves GET /api/settings.
func (s *Server) getSettings(w http.ResponseWriter, r *http.Request) error {
	out, err := s.settings(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// settings describes the user's settings: permission mode and rules, and
// the providers with their readiness, never a key.
func (s *Server) settings(ctx context.Context) (protocol.Settings, error) {
	us, err := s.app.UserPermissions()
	if err != nil {
		return protocol.Settings{}, errorf(http.StatusInternalServerError, protocol.CodeInvalidSettings, "%v", err)
	}
	out := protocol.Settings{Permissions: protocol.PermissionSettings{DefaultMode: string(us.DefaultMode),
		Allow: ruleTexts(us.Allow), Ask: ruleTexts(us.Ask), Deny: ruleTexts(us.Deny), File: us.Path}}
	for _, m := range permission.Modes() {
		out.Modes = append(out.Modes, string(m))
	}
	cfg := s.app.ConfigSnapshot()
	out.ActiveProvider = cfg.ActiveProvider
	if ref, err := cfg.Resolve(""); err == nil {
		out.DefaultModel = ref.String()
	}
	out.Providers = []protocol.ProviderStatus{}
	for _, name := range cfg.ProviderNames() {
		out.Providers = append(out.Providers, s.providerStatus(ctx, cfg.Providers[name]))
	}
	return out, nil
}

func ruleTexts(rules []permission.Rule) []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		out[i] = r.String()
	}
	return out
}

// putSettings serves PUT /api/settings: the permission settings, API keys
// (stored in the secret chain, never returned) and the default model.
// Everything is checked before anything is written; the answer is the
// settings as GET returns them.
func (s *Server) putSettings(w http.ResponseWriter, r *http.Request) error {
	var req protocol.SettingsUpdate
	if err := decode(w, r, &req, false); err != nil {
		return err
	}
	cfg := s.app.ConfigSnapshot()
	for name, key := range req.APIKeys {
		if _, ok := cfg.Providers[name]; !ok {
			return errorf(http.StatusBadRequest, protocol.CodeInvalidSettings, "apiKeys: unknown provider %q (providers: %s)",
				name, strings.Join(cfg.ProviderNames(), ", "))
		}
		if strings.ContainsAny(strings.TrimSpace(key), "\r\n") {
			return errorf(http.StatusBadRequest, protocol.CodeInvalidSettings, "apiKeys: the key of %s holds a line break", name)
		}
	}
	var ref config.ModelRef
	if req.DefaultModel != "" {
		var err error
		if ref, err = cfg.Resolve(req.DefaultModel); err != nil || !strings.Contains(req.DefaultModel, "/") {
			if err == nil {
				err = errors.New("give it as provider/model")
			}
			return errorf(http.StatusBadRequest, protocol.CodeInvalidSettings, "defaultModel: %v", err)
		}
	}
	if p := req.Permissions; p != nil {
		if p.DefaultMode != nil && *p.DefaultMode != "" {
			if _, err := permission.ParseMode(*p.DefaultMode); err != nil {
				return errorf(http.StatusBadRequest, protocol.CodeInvalidSettings, "permissions.defaultMode: %v", err)
			}
		}
		err := s.app.UpdateUserPermissions(app.PermissionChange{DefaultMode: p.DefaultMode, Allow: p.Allow, Ask: p.Ask, Deny: p.Deny})
		if err != nil {
			var se *permission.SettingsError
			if errors.As(err, &se) || errors.Is(err, permission.ErrInvalidSettings) {
				return errorf(http.StatusBadRequest, protocol.CodeInvalidSettings, "%v", err)
			}
			return err
		}
	}
	for name, key := range req.APIKeys {
		key = strings.TrimSpace(key)
		var err error
		if key == "" {
			err = s.app.Secrets.Delete(r.Context(), name)
		} else {
			_, err = s.app.Secrets.Set(r.Context(), name, key)
		}
		if err != nil {
			return errorf(http.StatusInternalServerError, protocol.CodeInternal, "store the key of %s: %v", name, err)
		}
	}
	if req.DefaultModel != "" {
		provider, model := ref.Provider.Name, ref.Model
		err := s.app.UpdateConfig(func(c *config.Config) error {
			p := *c.Providers[provider]
			p.Model = model
			c.Providers[provider] = &p
			c.ActiveProvider = provider
			return nil
		})
		if err != nil {
			return err
		}
	}
	out, err := s.settings(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
