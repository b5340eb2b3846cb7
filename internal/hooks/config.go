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

// EventName names a point of a session where hooks run. The names and
// their spelling are Claude Code's.
type EventName string

// The events hooks can be configured for.
const (
	// SessionStart runs when a session starts or resumes.
	SessionStart EventName = "SessionStart"
	// UserPromptSubmit runs when the user sends a message, before the
	// model sees it.
	UserPromptSubmit EventName = "UserPromptSubmit"
	// PreToolUse runs before a tool call, after the model asked for it.
	PreToolUse EventName = "PreToolUse"
	// PostToolUse runs after a tool call has run.
	PostToolUse EventName = "PostToolUse"
	// Stop runs when the model has answered without tool calls and the
	// turn is about to end.
	Stop EventName = "Stop"
	// PreCompact runs before the conversation is compacted.
	PreCompact EventName = "PreCompact"
)

// Events returns the events hooks can be configured for, in the order a
// session meets them.
func Events() []EventName {
	return []EventName{SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop, PreCompact}
}

// valid reports whether n is one of Events.
func (n EventName) valid() bool { return slices.Contains(Events(), n) }

// claudeOnlyEvent reports whether name is a Claude Code hook event that
// mx-claw does not have, to explain why it is refused.
func claudeOnlyEvent(name string) bool {
	switch name {
	case "Notification", "SubagentStop", "SessionEnd":
		return true
	}
	return false
}

// DefaultTimeout is how long a hook may run when its entry gives no
// timeout.
const DefaultTimeout = 60 * time.Second

// maxTimeout bounds a configured timeout, which is mostly a guard against
// numbers that overflow a Duration.
const maxTimeout = 24 * time.Hour

// Hook is one configured hook command.
type Hook struct {
	// Command is run with `bash -c`.
	Command string
	// Timeout is the entry's timeout; zero means the Runner's default.
	Timeout time.Duration
	// Source is the settings file the hook came from.
	Source string
	// Entry locates the hook in that file, e.g.
	// "hooks.PreToolUse[0].hooks[1]".
	Entry string
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
	events map[EventName][]group
}

// ParseConfig parses the value of the "hooks" key of a settings file,
// which source names in errors. An empty or null value is a configuration
// without hooks. Every problem is a *ConfigError matching ErrInvalidConfig
// that names source and the entry.
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
	if err := json.Unmarshal(raw, &events); err != nil {
		return nil, fail("hooks", "must be an object mapping event names to lists of matchers")
	}
	names := make([]string, 0, len(events))
	for name := range events {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		field := "hooks." + name
		ev := EventName(name)
		if !ev.valid() {
			valid := make([]string, 0, 6)
			for _, e := range Events() {
				valid = append(valid, string(e))
			}
			if claudeOnlyEvent(name) {
				return nil, fail(field, "mx-claw does not support the Claude Code event %q (supported: %s)", name, strings.Join(valid, ", "))
			}
			return nil, fail(field, "unknown event %q (valid: %s)", name, strings.Join(valid, ", "))
		}
		var groups []json.RawMessage
		if err := json.Unmarshal(events[name], &groups); err != nil {
			return nil, fail(field, "must be a list of {\"matcher\", \"hooks\"} objects")
		}
		for i, g := range groups {
			parsed, err := parseGroup(g, source, field+"["+strconv.Itoa(i)+"]")
			if err != nil {
				return nil, err
			}
			c.events[ev] = append(c.events[ev], parsed)
		}
	}
	return c, nil
}

// parseGroup parses one {"matcher", "hooks"} object found at field.
func parseGroup(raw json.RawMessage, source, field string) (group, error) {
	fail := func(field string, err error) (group, error) {
		return group{}, &ConfigError{Source: source, Field: field, Err: err}
	}
	obj, err := object(raw, "matcher", "hooks")
	if err != nil {
		return fail(field, err)
	}
	var g group
	if m, ok := obj["matcher"]; ok && string(m) != "null" {
		if err := json.Unmarshal(m, &g.matcher); err != nil {
			return fail(field+".matcher", errors.New("must be a string"))
		}
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
		h, err := parseHook(e)
		entry := field + ".hooks[" + strconv.Itoa(j) + "]"
		if err != nil {
			return fail(entry, err)
		}
		h.Source, h.Entry = source, entry
		g.hooks = append(g.hooks, h)
	}
	return g, nil
}

// parseHook parses one {"type": "command", "command", "timeout"} entry.
func parseHook(raw json.RawMessage) (Hook, error) {
	obj, err := object(raw, "type", "command", "timeout")
	if err != nil {
		return Hook{}, err
	}
	var typ string
	if t, ok := obj["type"]; !ok || json.Unmarshal(t, &typ) != nil || typ != "command" {
		return Hook{}, errors.New(`"type" must be "command"`)
	}
	var h Hook
	if c, ok := obj["command"]; !ok || json.Unmarshal(c, &h.Command) != nil || strings.TrimSpace(h.Command) == "" {
		return Hook{}, errors.New(`"command" must be a non-empty string`)
	}
	if t, ok := obj["timeout"]; ok && string(t) != "null" {
		var secs float64
		if err := json.Unmarshal(t, &secs); err != nil || secs <= 0 || math.IsNaN(secs) || secs > maxTimeout.Seconds() {
			return Hook{}, fmt.Errorf(`"timeout" must be a number of seconds between 0 and %d`, int(maxTimeout.Seconds()))
		}
		h.Timeout = time.Duration(secs * float64(time.Second))
	}
	return h, nil
}

// object decodes raw as a JSON object whose keys are all among allowed.
func object(raw json.RawMessage, allowed ...string) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, errors.New("must be an object")
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			return nil, fmt.Errorf("unknown key %q (valid: %s)", k, strings.Join(allowed, ", "))
		}
	}
	return obj, nil
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
	}
	return out
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

// Matching returns the hooks configured for ev.Name whose matcher matches
// ev, in the order they run (see the package doc for what a matcher is
// matched against).
func (c *Config) Matching(ev Event) []Hook {
	if c == nil {
		return nil
	}
	var out []Hook
	for _, g := range c.events[ev.Name] {
		if g.matches(ev) {
			out = append(out, g.hooks...)
		}
	}
	return out
}

// matches reports whether g's matcher accepts ev.
func (g group) matches(ev Event) bool {
	if g.re == nil {
		return true
	}
	switch ev.Name {
	case PreToolUse, PostToolUse:
		return slices.ContainsFunc(toolNames(ev.ToolName), g.re.MatchString)
	case SessionStart:
		return g.re.MatchString(ev.Source)
	case PreCompact:
		return g.re.MatchString(ev.Trigger)
	}
	return true // UserPromptSubmit and Stop have no matcher
}

// toolNames returns the names a matcher may use for the mx-claw tool name:
// the name itself and Claude Code's names for the same tool.
func toolNames(name string) []string {
	switch name {
	case "run_command":
		return []string{name, "Bash"}
	case "read_file":
		return []string{name, "Read"}
	case "write_file":
		return []string{name, "Write"}
	case "edit_file":
		return []string{name, "Edit", "MultiEdit"}
	case "glob":
		return []string{name, "Glob"}
	case "grep":
		return []string{name, "Grep"}
	case "list_dir":
		return []string{name, "LS"}
	case "todo_write":
		return []string{name, "TodoWrite"}
	}
	return []string{name}
}
