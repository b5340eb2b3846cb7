package permission

import (
	"errors"
	"fmt"
	"path/filepath"
)

// Options is what a Policy is built from.
type Options struct {
	// Mode is the mode chosen explicitly (flag, session); empty means the
	// settings' defaultMode, else default. An explicit mode wins over the
	// settings.
	Mode Mode
	// User is the user's settings; nil for none.
	User *Settings
	// Project is the workspace's settings; nil for none.
	Project *Settings
	// ClaudeProject are the workspace's Claude Code settings files
	// (ClaudeProjectSettingsPaths: the local file first), for a trusted
	// workspace only. Their rules apply like Project's; their defaultMode
	// only where Project gives none (mx-claw's own file wins), the first
	// file's first.
	ClaudeProject []*Settings
	// ProjectTrusted reports whether the user trusts the workspace. Until
	// then project settings may only tighten: their allow rules and a
	// defaultMode looser than the user's are ignored (see Policy.Ignored).
	ProjectTrusted bool
	// Grants are extra allow rules: approvals for this session and
	// persistent approvals for this project.
	Grants []Grant
	// Local is the workspace's settings.local.json (the user's own, where
	// "always" approvals are written); nil for none. Its deny and ask
	// rules apply; an allow rule applies when the project is trusted or
	// LocalGranted reports the user granted it in mx-claw.
	Local        *Settings
	LocalGranted func(rule string) bool
	// AppHome is the mx-claw home directory ($MX_CLAW_HOME), whose secret
	// files (see SecretStores) every tool is denied; empty for none.
	AppHome string
}

// Grant is an allow rule the user gave by approving a call.
type Grant struct {
	// Rule is the rule text, e.g. "run_command(go test:*)".
	Rule string
	// Origin says where the grant comes from, e.g. "session grant" or
	// "project grant"; it is shown as the source of decisions it makes.
	Origin string
}

// Ignored is a setting a Policy did not apply because the project is not
// trusted.
type Ignored struct {
	// Origin is the settings file.
	Origin string
	// Entry is the entry, e.g. `permissions.allow: run_command(make:*)`.
	Entry string
	// Reason says why it was ignored.
	Reason string
}

// EffectiveRule is a rule in force, with the list it is in and where it
// comes from.
type EffectiveRule struct {
	// List is Allow, Ask or Deny.
	List Action
	// Rule is the parsed rule.
	Rule Rule
	// Origin is the settings file path or the grant's origin.
	Origin string
}

// Policy decides tool calls. It is immutable and safe for concurrent use;
// With* methods return changed copies. The zero Policy is default mode
// with no rules.
type Policy struct {
	mode       Mode
	modeOrigin string
	rules      []EffectiveRule
	ignored    []Ignored
	home       string // the mx-claw home, absolute; "" for none
	stores     *storeCache
}

// NewPolicy builds a policy from the mode, the settings and the grants.
// It fails on an invalid explicit mode or grant.
func NewPolicy(o Options) (*Policy, error) {
	p := &Policy{mode: ModeDefault, modeOrigin: "the default", stores: &storeCache{}}
	if o.AppHome != "" {
		if abs, err := filepath.Abs(o.AppHome); err == nil {
			p.home = abs
		}
	}
	if u := o.User; u != nil {
		if u.DefaultMode != "" {
			p.mode, p.modeOrigin = u.DefaultMode, u.Path
		}
		p.addSettings(u, true)
	}
	if pr := o.Project; pr != nil {
		if m := pr.DefaultMode; m != "" {
			switch {
			case o.ProjectTrusted || m.looseness() < p.mode.looseness():
				p.mode, p.modeOrigin = m, pr.Path
			case m.looseness() > p.mode.looseness():
				p.ignored = append(p.ignored, Ignored{
					Origin: pr.Path, Entry: "permissions.defaultMode: " + string(m),
					Reason: "the project is not trusted, and its settings may only tighten permissions",
				})
			}
		}
		p.addSettings(pr, o.ProjectTrusted)
	}
	modeSet := o.Project != nil && o.Project.DefaultMode != ""
	for _, cs := range o.ClaudeProject {
		if cs == nil {
			continue
		}
		if cs.DefaultMode != "" && !modeSet {
			p.mode, p.modeOrigin, modeSet = cs.DefaultMode, cs.Path, true
		}
		p.addSettings(cs, true)
	}
	if l := o.Local; l != nil {
		p.addLocal(l, o.ProjectTrusted, o.LocalGranted)
	}
	if o.Mode != "" {
		m, err := ParseMode(string(o.Mode))
		if err != nil {
			return nil, err
		}
		p.mode, p.modeOrigin = m, "chosen for this session"
	}
	return p.WithGrants(o.Grants...)
}

// addSettings adds the rules of s; allow rules only when trusted.
func (p *Policy) addSettings(s *Settings, trusted bool) {
	for _, r := range s.Deny {
		p.rules = append(p.rules, EffectiveRule{List: Deny, Rule: r, Origin: s.Path})
	}
	for _, r := range s.Ask {
		p.rules = append(p.rules, EffectiveRule{List: Ask, Rule: r, Origin: s.Path})
	}
	const untrusted = "the project is not trusted, and its settings may only tighten permissions"
	for _, text := range s.UnparsedAllow {
		p.ignored = append(p.ignored, Ignored{Origin: s.Path, Entry: "permissions.allow: " + text, Reason: untrusted})
	}
	for _, k := range s.UnparsedKeys {
		p.ignored = append(p.ignored, Ignored{Origin: s.Path, Entry: k, Reason: untrusted})
	}
	for _, r := range s.Allow {
		if !trusted {
			p.ignored = append(p.ignored, Ignored{
				Origin: s.Path, Entry: "permissions.allow: " + r.Text,
				Reason: "the project is not trusted, and its settings may only tighten permissions",
			})
			continue
		}
		p.rules = append(p.rules, EffectiveRule{List: Allow, Rule: r, Origin: s.Path})
	}
}

// Mode returns the mode in force.
func (p *Policy) Mode() Mode {
	if p == nil {
		return ModeDefault
	}
	return p.mode.orDefault()
}

// ModeOrigin says where the mode comes from: a settings file, "chosen for
// this session" or "the default".
func (p *Policy) ModeOrigin() string {
	if p == nil || p.modeOrigin == "" {
		return "the default"
	}
	return p.modeOrigin
}

// Ignored returns the project settings not applied because the project is
// not trusted.
func (p *Policy) Ignored() []Ignored {
	if p == nil {
		return nil
	}
	return append([]Ignored(nil), p.ignored...)
}

// Rules returns the rules in force: deny, ask and allow rules of the
// user's settings, then the project's, then the grants.
func (p *Policy) Rules() []EffectiveRule {
	if p == nil {
		return nil
	}
	return append([]EffectiveRule(nil), p.rules...)
}

// WithMode returns a copy of p in mode m (for a mode switched during a
// session).
func (p *Policy) WithMode(m Mode) *Policy {
	q := p.clone()
	q.mode, q.modeOrigin = m.orDefault(), "chosen for this session"
	return q
}

// WithGrants returns a copy of p with more allow rules. It fails if a
// grant does not parse.
func (p *Policy) WithGrants(grants ...Grant) (*Policy, error) {
	q := p.clone()
	var errs []error
	for _, g := range grants {
		r, err := ParseRule(g.Rule)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", g.Origin, err))
			continue
		}
		q.rules = append(q.rules, EffectiveRule{List: Allow, Rule: r, Origin: g.Origin})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return q, nil
}

func (p *Policy) clone() *Policy {
	if p == nil {
		return &Policy{mode: ModeDefault, modeOrigin: "the default"}
	}
	q := *p
	q.rules = append([]EffectiveRule(nil), p.rules...)
	q.ignored = append([]Ignored(nil), p.ignored...)
	return &q
}
