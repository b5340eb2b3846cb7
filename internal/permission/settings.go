package permission

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mx-claw/mx-claw/internal/safefile"
)

// Settings is the permission part of one settings file (user:
// $MX_CLAW_HOME/settings.json; project: <workspace>/.mx-claw/settings.json):
//
//	{"permissions": {"allow": [...], "ask": [...], "deny": [...],
//	                 "defaultMode": "acceptEdits",
//	                 "additionalDirectories": [...]},
//	 "hooks": {...}}
//
// Top-level keys other than "permissions" (hooks, env, …) are kept raw in
// Other for the packages that own them.
type Settings struct {
	// Path is the file the settings were read from.
	Path string
	// Exists reports whether the file exists; a missing file gives empty
	// settings.
	Exists bool
	// Allow, Ask and Deny are the rule lists, in file order.
	Allow, Ask, Deny []Rule
	// DefaultMode is permissions.defaultMode, or "" if unset.
	DefaultMode Mode
	// AdditionalDirectories is permissions.additionalDirectories as
	// written (Claude Code's key); the workspace wiring decides what it
	// means.
	AdditionalDirectories []string
	// Other holds the top-level keys other than "permissions", unparsed.
	// It is empty for settings read before their project is trusted.
	Other map[string]json.RawMessage

	// TightenOnly reports settings read from a project that is not trusted
	// (see LoadProjectSettings): only what can tighten was parsed.
	TightenOnly bool
	// UnparsedAllow are, for TightenOnly settings, the allow rules as
	// written, not parsed: they do not apply.
	UnparsedAllow []string
	// UnparsedKeys are, for TightenOnly settings, the top-level keys other
	// than "permissions" (hooks, …), not parsed: they do not apply.
	UnparsedKeys []string
}

// UserSettingsPath returns the user settings file under the mx-claw home
// directory.
func UserSettingsPath(home string) string { return filepath.Join(home, "settings.json") }

// ProjectSettingsPath returns the project settings file of a workspace.
func ProjectSettingsPath(workspace string) string {
	return filepath.Join(workspace, ProjectDir, "settings.json")
}

// ClaudeProjectSettingsPaths returns Claude Code's project settings files
// of a workspace, the one that wins first: .claude/settings.local.json,
// then .claude/settings.json.
func ClaudeProjectSettingsPaths(workspace string) []string {
	return []string{
		filepath.Join(workspace, ".claude", "settings.local.json"),
		filepath.Join(workspace, ".claude", "settings.json"),
	}
}

// LoadSettings reads and parses a settings file (the user's). A missing
// file gives empty settings with Exists false; any other problem is an
// error naming the file (and the entry, for a bad rule or mode) that
// matches ErrInvalidSettings, or a read error. Only a regular file of at
// most 1 MiB is read (see package safefile): a link to /dev/zero or a
// named pipe is an error, not a hang.
func LoadSettings(path string) (*Settings, error) {
	data, err := safefile.ReadFile(path, safefile.DefaultMax)
	if errors.Is(err, fs.ErrNotExist) {
		return &Settings{Path: path}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read settings: %w", err)
	}
	return ParseSettings(path, data)
}

// LoadProjectSettings reads a workspace's settings,
// <workspace>/.mx-claw/settings.json. A project's configuration must be in
// the project: a symbolic link as .mx-claw or as settings.json is refused
// with an error naming it (matching ErrInvalidSettings), since a link can
// make a file the agent may write elsewhere become the settings, or read
// anything as settings. Until the project is trusted only what can tighten
// is parsed — the deny and ask rules and the defaultMode — and the rest is
// kept unparsed (TightenOnly, UnparsedAllow, UnparsedKeys) so it can be
// reported as ignored. Otherwise it is LoadSettings.
func LoadProjectSettings(workspace string, trusted bool) (*Settings, error) {
	path := ProjectSettingsPath(workspace)
	data, err := safefile.ReadInTree(workspace, filepath.Join(ProjectDir, "settings.json"), safefile.DefaultMax)
	var le *safefile.LinkError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &Settings{Path: path, TightenOnly: !trusted}, nil
	case errors.As(err, &le):
		return nil, &SettingsError{Path: path, Err: fmt.Errorf("%w: project configuration must be a real "+
			"file inside the project, and %s is a symbolic link (to %s); replace the link with the "+
			"directory or file itself, or remove it", ErrSymlinkedConfig, le.Path, le.Target)}
	case err != nil:
		return nil, fmt.Errorf("read settings: %w", err)
	}
	if trusted {
		return ParseSettings(path, data)
	}
	return parseTightening(path, data)
}

// LoadClaudeSettings reads one of Claude Code's project settings files,
// <workspace>/.claude/<name> (see ClaudeProjectSettingsPaths), for a
// trusted workspace. Like LoadProjectSettings it refuses a symbolic link
// as .claude or as the file, and reads at most safefile.DefaultMax bytes.
func LoadClaudeSettings(workspace, name string) (*Settings, error) {
	rel := filepath.Join(".claude", name)
	path := filepath.Join(workspace, rel)
	data, err := safefile.ReadInTree(workspace, rel, safefile.DefaultMax)
	var le *safefile.LinkError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &Settings{Path: path}, nil
	case errors.As(err, &le):
		return nil, &SettingsError{Path: path, Err: fmt.Errorf("%w: project configuration must be a real "+
			"file inside the project, and %s is a symbolic link (to %s); replace the link with the "+
			"directory or file itself, or remove it", ErrSymlinkedConfig, le.Path, le.Target)}
	case err != nil:
		return nil, fmt.Errorf("read settings: %w", err)
	}
	return ParseSettings(path, data)
}

// ProjectDir is the directory of a project's mx-claw configuration.
const ProjectDir = ".mx-claw"

// ParseSettings parses the text of a settings file; path is used in
// errors. Every malformed entry is reported (joined), none is skipped.
func ParseSettings(path string, data []byte) (*Settings, error) {
	s := &Settings{Path: path, Exists: true}
	bad := func(field string, err error) error { return &SettingsError{Path: path, Field: field, Err: err} }
	if len(bytes.TrimSpace(data)) == 0 {
		return s, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, bad("", jsonProblem(data, err, "a JSON object"))
	}
	if top == nil {
		return nil, bad("", errors.New("must be a JSON object"))
	}
	for k, v := range top {
		if k != "permissions" {
			if s.Other == nil {
				s.Other = map[string]json.RawMessage{}
			}
			s.Other[k] = v
		}
	}
	raw, ok := top["permissions"]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return s, nil
	}
	var perms map[string]json.RawMessage
	if err := json.Unmarshal(raw, &perms); err != nil || perms == nil {
		return nil, bad("permissions", errors.New("must be an object"))
	}
	var errs []error
	keys := make([]string, 0, len(perms))
	for k := range perms {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := perms[k]
		field := "permissions." + k
		switch k {
		case "allow", "ask", "deny":
			rules, err := parseRuleList(path, field, v)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			switch k {
			case "allow":
				s.Allow = rules
			case "ask":
				s.Ask = rules
			default:
				s.Deny = rules
			}
		case "defaultMode":
			var name string
			if err := json.Unmarshal(v, &name); err != nil {
				errs = append(errs, bad(field, errors.New("must be a string")))
				continue
			}
			m, err := ParseMode(name)
			if err != nil {
				errs = append(errs, bad(field, err))
				continue
			}
			s.DefaultMode = m
		case "additionalDirectories":
			if err := json.Unmarshal(v, &s.AdditionalDirectories); err != nil {
				errs = append(errs, bad(field, errors.New("must be an array of strings")))
			}
		default:
			errs = append(errs, bad(field, errors.New("unknown key (valid: allow, ask, deny, defaultMode, additionalDirectories)")))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// parseTightening parses the settings of a project that is not trusted:
// the deny and ask rules and the defaultMode, which can only tighten, and
// nothing else. Malformed entries among those are errors, as a deny rule
// must not be dropped silently; the allow rules are kept as written and
// other top-level keys by name.
func parseTightening(path string, data []byte) (*Settings, error) {
	s := &Settings{Path: path, Exists: true, TightenOnly: true}
	bad := func(field string, err error) error { return &SettingsError{Path: path, Field: field, Err: err} }
	if len(bytes.TrimSpace(data)) == 0 {
		return s, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, bad("", jsonProblem(data, err, "a JSON object"))
	}
	if top == nil {
		return nil, bad("", errors.New("must be a JSON object"))
	}
	for k := range top {
		if k != "permissions" {
			s.UnparsedKeys = append(s.UnparsedKeys, k)
		}
	}
	slices.Sort(s.UnparsedKeys)
	raw, ok := top["permissions"]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return s, nil
	}
	var perms map[string]json.RawMessage
	if err := json.Unmarshal(raw, &perms); err != nil || perms == nil {
		return nil, bad("permissions", errors.New("must be an object"))
	}
	var errs []error
	for _, k := range []string{"ask", "deny"} {
		v, ok := perms[k]
		if !ok {
			continue
		}
		rules, err := parseRuleList(path, "permissions."+k, v)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if k == "ask" {
			s.Ask = rules
		} else {
			s.Deny = rules
		}
	}
	if v, ok := perms["defaultMode"]; ok {
		var name string
		if err := json.Unmarshal(v, &name); err != nil {
			errs = append(errs, bad("permissions.defaultMode", errors.New("must be a string")))
		} else if m, err := ParseMode(name); err != nil {
			errs = append(errs, bad("permissions.defaultMode", err))
		} else {
			s.DefaultMode = m
		}
	}
	if v, ok := perms["allow"]; ok {
		var items []json.RawMessage
		_ = json.Unmarshal(v, &items)
		for _, it := range items {
			var text string
			if json.Unmarshal(it, &text) != nil {
				text = string(bytes.TrimSpace(it))
			}
			s.UnparsedAllow = append(s.UnparsedAllow, text)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// parseRuleList parses one of the allow, ask and deny arrays.
func parseRuleList(path, field string, raw json.RawMessage) ([]Rule, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, &SettingsError{Path: path, Field: field, Err: errors.New("must be an array of rule strings")}
	}
	var rules []Rule
	var errs []error
	for i, it := range items {
		f := fmt.Sprintf("%s[%d]", field, i)
		var text string
		if err := json.Unmarshal(it, &text); err != nil {
			errs = append(errs, &SettingsError{Path: path, Field: f, Err: fmt.Errorf("must be a string, not %s", strings.TrimSpace(string(it)))})
			continue
		}
		r, err := ParseRule(text)
		if err != nil {
			errs = append(errs, &SettingsError{Path: path, Field: f, Err: err})
			continue
		}
		rules = append(rules, r)
	}
	return rules, errors.Join(errs...)
}

// jsonProblem describes a JSON decoding error with its line and column.
func jsonProblem(data []byte, err error, want string) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line, col := lineCol(data, syn.Offset)
		return fmt.Errorf("invalid JSON at line %d, column %d: %v", line, col, syn)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return fmt.Errorf("must be %s", want)
	}
	return fmt.Errorf("invalid JSON: %w", err)
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(data []byte, off int64) (int, int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}
