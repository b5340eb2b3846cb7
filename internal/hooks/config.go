package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultTimeout is how long a hook may run when its entry gives no
// timeout.
const DefaultTimeout = 60 * time.Second

// maxTimeout bounds a configured timeout. Larger values are accepted and
// cut to it: it only keeps the number inside a Duration.
const maxTimeout = 24 * time.Hour

// Hook is one configured hook command.
type Hook struct {
	// Command is run with `bash -c`.
	Command string
	// Timeout is the entry's timeout; zero means the Runner's default.
	Timeout time.Duration
	// Async runs the hook in the background: the session does not wait
	// for it and nothing it answers decides anything (Claude Code's
	// "async": true).
	Async bool
	// Source is the settings file the hook came from.
	Source string
	// Entry locates the hook in that file, e.g.
	// "hooks.PreToolUse[0].hooks[1]".
	Entry string
	// Extra holds the entry's keys mx-claw does not use, as written.
	Extra map[string]json.RawMessage
}

// group is a matcher and the hooks it guards.
type group struct {
	matcher string
	re      *regexp.Regexp // nil matches everything
	hooks   []Hook
}

// Config is a parsed hooks configuration: for each event, matcher groups
// in order. It is immutable once built, so it may be shared by goroutines.
// The zero value and nil have no hooks.
type Config struct {
	events  map[EventName][]group
	notices []string
}

// ParseConfig parses the value of the "hooks" key of a settings file,
// which source names in errors and notices. An empty or null value is a
// configuration without hooks.
//
// What Claude Code accepts loads: events mx-claw does not have, entry keys
// it does not use, hook types other than "command" and any timeout are
// kept or skipped with a notice (see [Config.Notices]), never refused.
// What no tool could run — a value of the wrong JSON type, a group without
// "hooks", a command hook without a command, a matcher that is not a
// regular expression — is a *ConfigError matching ErrInvalidConfig that
// names source and the entry, so a broken guard never goes unnoticed.
func ParseConfig(raw json.RawMessage, source string) (*Config, error) {
	c := &Config{events: map[EventName][]group{}}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return c, nil
	}
	fail := func(field string, format string, args ...any) error {
		return &ConfigError{Source: source, Field: field, Err: fmt.Errorf(format, args...)}
	}
	var events map[string]json.RawMessage
	if err := json.Unmarshal(raw, &events); err != nil || events == nil {
		return nil, fail("hooks", "must be an object mapping event names to lists of matchers")
	}
	names := make([]string, 0, len(events))
	for name := range events {
		names = append(names, name)
	}
	slices.Sort(names)
	p := parser{source: source, c: c}
	for _, name := range names {
		field := "hooks." + name
		ev := EventName(name)
		var groups []json.RawMessage
		if err := json.Unmarshal(events[name], &groups); err != nil {
			return nil, fail(field, "must be a list of {\"matcher\", \"hooks\"} objects")
		}
		var parsed []group
		for i, g := range groups {
			pg, err := p.group(g, field+"["+strconv.Itoa(i)+"]")
			if err != nil {
				return nil, err
			}
			parsed = append(parsed, pg)
		}
		switch {
		case ev.valid():
			c.events[ev] = append(c.events[ev], parsed...)
		case len(parsed) == 0:
		case claudeOnlyEvent(name):
			p.notice(field, "mx-claw has no %s moment, so these hooks never run", name)
		default:
			p.notice(field, "unknown hook event %q (known: %s), so these hooks never run", name, eventList())
		}
	}
	return c, nil
}

// eventList names the events mx-claw runs hooks for.
func eventList() string {
	names := make([]string, 0, len(Events()))
	for _, e := range Events() {
		names = append(names, string(e))
	}
	return strings.Join(names, ", ")
}

// parser parses the groups and entries of one settings file.
type parser struct {
	source string
	c      *Config
}

// notice records a message about field for the user.
func (p *parser) notice(field, format string, args ...any) {
	s := ""
	if p.source != "" {
		s = p.source + ": "
	}
	p.c.notices = append(p.c.notices, s+field+": "+fmt.Sprintf(format, args...))
}

// group parses one {"matcher", "hooks"} object found at field.
func (p *parser) group(raw json.RawMessage, field string) (group, error) {
	fail := func(field string, err error) (group, error) {
		return group{}, &ConfigError{Source: p.source, Field: field, Err: err}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return fail(field, errors.New("must be an object"))
	}
	p.extraKeys(field, obj, "matcher", "hooks")
	var g group
	if m, ok := obj["matcher"]; ok && string(m) != "null" {
		if err := json.Unmarshal(m, &g.matcher); err != nil {
			return fail(field+".matcher", errors.New("must be a string"))
		}
		var err error
		if g.re, err = compileMatcher(g.matcher); err != nil {
			return fail(field+".matcher", err)
		}
	}
	list, ok := obj["hooks"]
	if !ok {
		return fail(field, errors.New(`"hooks" is required`))
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(list, &entries); err != nil {
		return fail(field+".hooks", errors.New("must be a list of hook commands"))
	}
	for j, e := range entries {
		entry := field + ".hooks[" + strconv.Itoa(j) + "]"
		h, ok, err := p.hook(e, entry)
		if err != nil {
			return fail(entry, err)
		}
		if ok {
			h.Source, h.Entry = p.source, entry
			g.hooks = append(g.hooks, h)
		}
	}
	return g, nil
}

// hookKeys are the keys of a hook entry mx-claw uses.
var hookKeys = []string{"type", "command", "timeout", "async"}

// hook parses one hook entry found at field. ok is false for an entry
// that loads but never runs (a type other than "command").
func (p *parser) hook(raw json.RawMessage, field string) (h Hook, ok bool, err error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return Hook{}, false, errors.New("must be an object")
	}
	var typ string
	if t, found := obj["type"]; !found || json.Unmarshal(t, &typ) != nil || typ == "" {
		return Hook{}, false, errors.New(`"type" must be a string ("command")`)
	}
	if typ != "command" {
		p.notice(field, "hooks of type %q are not supported by mx-claw, so this one never runs (only \"command\" hooks run)", typ)
		return Hook{}, false, nil
	}
	if c, found := obj["command"]; !found || json.Unmarshal(c, &h.Command) != nil || strings.TrimSpace(h.Command) == "" {
		return Hook{}, false, errors.New(`"command" must be a non-empty string`)
	}
	if t, found := obj["timeout"]; found && string(t) != "null" {
		var secs float64
		switch err := json.Unmarshal(t, &secs); {
		case err != nil || math.IsNaN(secs):
			p.notice(field, "\"timeout\" %s is not a number of seconds; the default (%s) applies", strings.TrimSpace(string(t)), seconds(DefaultTimeout))
		case secs <= 0:
			p.notice(field, "\"timeout\" %s is not positive; the default (%s) applies", strings.TrimSpace(string(t)), seconds(DefaultTimeout))
		case secs > maxTimeout.Seconds():
			h.Timeout = maxTimeout
		default:
			h.Timeout = time.Duration(secs * float64(time.Second))
		}
	}
	if a, found := obj["async"]; found && string(a) != "null" {
		if err := json.Unmarshal(a, &h.Async); err != nil {
			p.notice(field, "\"async\" %s is not true or false; the hook runs in the foreground", strings.TrimSpace(string(a)))
		}
	}
	h.Extra = p.extraKeys(field, obj, hookKeys...)
	return h, true, nil
}

// extraKeys returns the keys of obj that are not among used, with a
// notice naming them: they are kept, not refused, since newer Claude Code
// versions add keys.
func (p *parser) extraKeys(field string, obj map[string]json.RawMessage, used ...string) map[string]json.RawMessage {
	var keys []string
	for k := range obj {
		if !slices.Contains(used, k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.Sort(keys)
	extra := make(map[string]json.RawMessage, len(keys))
	for _, k := range keys {
		extra[k] = obj[k]
	}
	quoted := make([]string, len(keys))
	for i, k := range keys {
		quoted[i] = strconv.Quote(k)
	}
	p.notice(field, "mx-claw ignores the key(s) %s (it uses %s)", strings.Join(quoted, ", "), strings.Join(used, ", "))
	return extra
}

// compileMatcher compiles a matcher as a whole-string match; the empty
// matcher and `*` match everything (nil).
func compileMatcher(m string) (*regexp.Regexp, error) {
	if m == "" || m == "*" {
		return nil, nil
	}
	// Compile it alone first: a matcher such as `a)|(b` would otherwise
	// escape the anchoring group.
	if _, err := regexp.Compile(m); err != nil {
		return nil, fmt.Errorf("invalid regular expression %q: %w", m, err)
	}
	return regexp.Compile("^(?:" + m + ")$")
}

// Merge returns a configuration with the hooks of configs, in order: for
// each event, the groups of the first, then those of the second, and so on
// (user settings first, then project). Nil configs are skipped.
func Merge(configs ...*Config) *Config {
	out := &Config{events: map[EventName][]group{}}
	for _, c := range configs {
		if c == nil {
			continue
		}
		for ev, gs := range c.events {
			out.events[ev] = append(out.events[ev], gs...)
		}
		out.notices = append(out.notices, c.notices...)
	}
	return out
}

// Notices returns what the user should be told once about the
// configuration: hooks that load but never run, keys and values mx-claw
// ignores. Each names the settings file and the entry.
func (c *Config) Notices() []string {
	if c == nil {
		return nil
	}
	return slices.Clone(c.notices)
}

// Len returns how many hook commands c holds, over all events.
func (c *Config) Len() int {
	if c == nil {
		return 0
	}
	n := 0
	for _, gs := range c.events {
		for _, g := range gs {
			n += len(g.hooks)
		}
	}
	return n
}

// Has reports whether any hook is configured for ev.
func (c *Config) Has(ev EventName) bool {
	if c == nil {
		return false
	}
	for _, g := range c.events[ev] {
		if len(g.hooks) > 0 {
			return true
		}
	}
	return false
}

// Matching returns the hooks configured for ev.Name whose matcher matches
// ev, in the order they run (see the package doc for what a matcher is
// matched against). For a tool event it matches the call as mx-claw names
// it; [Runner.Run] also matches each Claude Code view of the call.
func (c *Config) Matching(ev Event) []Hook {
	return c.matching(ev.Name, subject(ev), toolNames(ev.ToolName)...)
}

// matching returns the hooks of event whose matcher matches one of names
// (tool events) or subj (other events).
func (c *Config) matching(event EventName, subj string, names ...string) []Hook {
	if c == nil {
		return nil
	}
	var out []Hook
	for _, g := range c.events[event] {
		ok := g.re == nil
		switch {
		case ok:
		case toolEvent(event):
			ok = slices.ContainsFunc(names, g.re.MatchString)
		case hasMatcher(event):
			ok = g.re.MatchString(subj)
		default:
			ok = true // UserPromptSubmit and Stop have no matcher
		}
		if ok {
			out = append(out, g.hooks...)
		}
	}
	return out
}

// hasMatcher reports whether ev's matcher is matched against a subject
// (other than a tool name).
func hasMatcher(ev EventName) bool {
	switch ev {
	case SessionStart, PreCompact, PostCompact, Notification, SessionEnd, SubagentStart, SubagentStop:
		return true
	}
	return false
}

// subject is what the matcher of a non-tool event is matched against.
func subject(ev Event) string {
	switch ev.Name {
	case SessionStart:
		return ev.Source
	case PreCompact, PostCompact:
		return ev.Trigger
	case Notification:
		return ev.NotificationType
	case SessionEnd:
		return ev.Reason
	case SubagentStart, SubagentStop:
		return ev.AgentType
	}
	return ""
}
