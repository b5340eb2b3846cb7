package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Startup says when a session's servers start.
type Startup string

// The startup modes.
const (
	// StartupLazy starts a server at the first call of one of its tools.
	// The session's tool list then comes from the server's last listing
	// (kept per entry), so a server is started at session start only the
	// first time its entry is seen.
	StartupLazy Startup = "lazy"
	// StartupSession starts every server at the session's first turn.
	StartupSession Startup = "session"
)

// Defaults of Settings.
const (
	DefaultStartTimeout    = 30 * time.Second
	DefaultCallTimeout     = 2 * time.Minute
	DefaultMaxResultBytes  = 64 << 10
	DefaultMaxMessageBytes = 8 << 20
)

// Settings tune the client; they are the "mcp" key of the user's
// settings.json (a project cannot set them):
//
//	{"mcp": {"startup": "lazy", "startTimeout": "30s", "callTimeout": "2m",
//	         "maxResultBytes": 65536, "maxMessageBytes": 8388608,
//	         "trustReadOnlyHints": ["github"]}}
type Settings struct {
	// Startup is when servers start; StartupLazy by default.
	Startup Startup
	// StartTimeout bounds starting a server and its handshake.
	StartTimeout time.Duration
	// CallTimeout bounds one tool call.
	CallTimeout time.Duration
	// MaxResultBytes caps the text of a result the model gets (head and
	// tail are kept).
	MaxResultBytes int
	// MaxMessageBytes caps one message from a server; a bigger one stops
	// the server and fails the call.
	MaxMessageBytes int
	// TrustReadOnly lists the servers whose read-only hints the user
	// trusts: their tools marked readOnlyHint run without asking, like
	// reads. TrustAllReadOnly trusts every server's ("trustReadOnlyHints":
	// true). By default every MCP tool asks.
	TrustReadOnly    []string
	TrustAllReadOnly bool
}

// DefaultSettings returns the settings used when the user sets none.
func DefaultSettings() Settings {
	return Settings{Startup: StartupLazy, StartTimeout: DefaultStartTimeout, CallTimeout: DefaultCallTimeout,
		MaxResultBytes: DefaultMaxResultBytes, MaxMessageBytes: DefaultMaxMessageBytes}
}

// TrustsReadOnly reports whether the read-only hints of the named server
// are trusted.
func (s Settings) TrustsReadOnly(server string) bool {
	return s.TrustAllReadOnly || slices.Contains(s.TrustReadOnly, server)
}

// ParseSettings reads the "mcp" key of the settings file at path; empty
// raw gives DefaultSettings. Every problem is reported, naming the field;
// a field in error keeps nothing.
func ParseSettings(raw json.RawMessage, path string) (Settings, error) {
	s := DefaultSettings()
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return s, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return s, fmt.Errorf("%s: mcp: must be an object", path)
	}
	var errs []error
	bad := func(field string, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: mcp.%s: %s", path, field, fmt.Sprintf(format, args...)))
	}
	duration := func(field string, v json.RawMessage, dst *time.Duration) {
		var text string
		if json.Unmarshal(v, &text) != nil {
			bad(field, "must be a duration such as \"30s\"")
			return
		}
		d, err := time.ParseDuration(text)
		if err != nil || d <= 0 {
			bad(field, "must be a positive duration such as \"30s\", not %q", text)
			return
		}
		*dst = d
	}
	size := func(field string, v json.RawMessage, dst *int) {
		var n int
		if json.Unmarshal(v, &n) != nil || n < 1024 {
			bad(field, "must be a number of bytes, at least 1024")
			return
		}
		*dst = n
	}
	for _, k := range sortedKeys(obj) {
		v := obj[k]
		switch k {
		case "startup":
			var text string
			_ = json.Unmarshal(v, &text)
			switch Startup(text) {
			case StartupLazy, StartupSession:
				s.Startup = Startup(text)
			default:
				bad(k, "must be \"lazy\" or \"session\"")
			}
		case "startTimeout":
			duration(k, v, &s.StartTimeout)
		case "callTimeout":
			duration(k, v, &s.CallTimeout)
		case "maxResultBytes":
			size(k, v, &s.MaxResultBytes)
		case "maxMessageBytes":
			size(k, v, &s.MaxMessageBytes)
		case "trustReadOnlyHints":
			var all bool
			var names []string
			switch {
			case json.Unmarshal(v, &all) == nil:
				s.TrustAllReadOnly = all
			case json.Unmarshal(v, &names) == nil:
				s.TrustReadOnly = names
			default:
				bad(k, "must be true, false or an array of server names")
			}
		default:
			bad(k, "unknown key (valid: startup, startTimeout, callTimeout, maxResultBytes, maxMessageBytes, trustReadOnlyHints)")
		}
	}
	if s.MaxMessageBytes < s.MaxResultBytes {
		bad("maxMessageBytes", "must be at least maxResultBytes (%d)", s.MaxResultBytes)
	}
	if len(errs) > 0 {
		return DefaultSettings(), errors.Join(errs...)
	}
	return s, nil
}
