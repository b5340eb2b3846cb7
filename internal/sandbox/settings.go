package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Mode is how much a sandboxed command may write.
type Mode string

// The modes of the `sandbox.mode` setting and the --sandbox flag.
const (
	// ModeWorkspaceWrite lets commands write the workspace, the session's
	// temp dir and the writable roots, except the protected paths.
	ModeWorkspaceWrite Mode = "workspace-write"
	// ModeReadOnly lets commands write nothing but the session's temp dir.
	ModeReadOnly Mode = "read-only"
	// ModeOff runs commands without a sandbox (resource limits and the
	// process-group lifecycle still apply).
	ModeOff Mode = "off"
)

// ParseMode parses a mode name; "" is workspace-write.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.TrimSpace(s)); m {
	case "":
		return ModeWorkspaceWrite, nil
	case ModeWorkspaceWrite, ModeReadOnly, ModeOff:
		return m, nil
	}
	return "", fmt.Errorf("%w: mode %q: want workspace-write, read-only or off", ErrInvalidSettings, s)
}

// strictness orders modes: a project may only move to a stricter one.
func (m Mode) strictness() int {
	switch m {
	case ModeOff:
		return 0
	case ModeReadOnly:
		return 2
	}
	return 1
}

// Settings is the `sandbox` object of one settings file (the user's
// $MX_CLAW_HOME/settings.json or a project's .mx-claw/settings.json):
//
//	{"sandbox": {"mode": "workspace-write", "network": false,
//	             "writableRoots": [], "allowedHosts": [],
//	             "limits": {"cpuSeconds": 600, "addressSpaceMB": 4096,
//	                        "processes": 1024, "fileSizeMB": 1024}}}
//
// Every key is optional; "limits" is mx-claw's addition to the contract.
type Settings struct {
	Mode          Mode     `json:"mode,omitempty"`
	Network       *bool    `json:"network,omitempty"`
	WritableRoots []string `json:"writableRoots,omitempty"`
	AllowedHosts  []string `json:"allowedHosts,omitempty"`
	Limits        *Limits  `json:"limits,omitempty"`
	// Origin is the settings file the entry came from.
	Origin string `json:"-"`
}

// ParseSettings parses the raw `sandbox` value of the settings file
// origin. Unknown keys, a bad mode, a relative writable root and a host
// pattern that is not a plain host name are errors naming the entry.
func ParseSettings(origin string, raw json.RawMessage) (*Settings, error) {
	s := &Settings{Origin: origin}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return s, nil
	}
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("%w: %s: sandbox%s: %s", ErrInvalidSettings, origin, field, fmt.Sprintf(format, args...))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(s); err != nil {
		return nil, bad("", "%v (keys: mode, network, writableRoots, allowedHosts, limits)", err)
	}
	m, err := ParseMode(string(s.Mode))
	if err != nil {
		return nil, bad(".mode", "%q: want workspace-write, read-only or off", s.Mode)
	}
	if s.Mode != "" {
		s.Mode = m
	}
	for i, r := range s.WritableRoots {
		if !filepath.IsAbs(r) && !strings.HasPrefix(r, "~/") {
			return nil, bad(fmt.Sprintf(".writableRoots[%d]", i), "%q must be an absolute path or start with ~/", r)
		}
	}
	for i, h := range s.AllowedHosts {
		if err := checkHostPattern(h); err != nil {
			return nil, bad(fmt.Sprintf(".allowedHosts[%d]", i), "%v", err)
		}
	}
	if l := s.Limits; l != nil {
		if l.CPUSeconds < 0 || l.AddressSpaceMB < 0 || l.Processes < 0 || l.FileSizeMB < 0 {
			return nil, bad(".limits", "limits must not be negative (0 means the default)")
		}
	}
	return s, nil
}

// Config is the sandbox configuration in force for a workspace: the
// user's settings, tightened by the project's, under the --sandbox flag.
type Config struct {
	Mode          Mode     `json:"mode"`
	Network       bool     `json:"network"`
	WritableRoots []string `json:"writableRoots"`
	AllowedHosts  []string `json:"allowedHosts"`
	Limits        Limits   `json:"limits"`
	// ModeOrigin says where the mode comes from.
	ModeOrigin string `json:"modeOrigin"`
}

// Resolve combines the user's and the project's settings (either may be
// nil) under an explicit mode (the --sandbox flag; "" for none). The
// project may only tighten: a stricter mode, the network off, fewer
// allowed hosts, lower limits; its writable roots are ignored. home is the
// user's home directory for "~/" in writable roots.
func Resolve(user, project *Settings, flag Mode, home string) Config {
	c := Config{Mode: ModeWorkspaceWrite, ModeOrigin: "the default", Limits: DefaultLimits()}
	if user != nil {
		if user.Mode != "" {
			c.Mode, c.ModeOrigin = user.Mode, user.Origin
		}
		if user.Network != nil {
			c.Network = *user.Network
		}
		for _, r := range user.WritableRoots {
			if rest, ok := strings.CutPrefix(r, "~/"); ok {
				if home == "" {
					continue
				}
				r = filepath.Join(home, rest)
			}
			c.WritableRoots = append(c.WritableRoots, filepath.Clean(r))
		}
		c.AllowedHosts = append(c.AllowedHosts, user.AllowedHosts...)
		c.Limits = c.Limits.tighten(user.Limits, true)
	}
	if project != nil {
		if project.Mode != "" && project.Mode.strictness() > c.Mode.strictness() {
			c.Mode, c.ModeOrigin = project.Mode, project.Origin
		}
		if project.Network != nil && !*project.Network {
			c.Network = false
		}
		if project.AllowedHosts != nil {
			c.AllowedHosts = slices.DeleteFunc(c.AllowedHosts, func(h string) bool {
				return !slices.Contains(project.AllowedHosts, h)
			})
		}
		c.Limits = c.Limits.tighten(project.Limits, false)
	}
	if flag != "" {
		c.Mode, c.ModeOrigin = flag, "the --sandbox flag"
	}
	if c.Network {
		// The whole network is open; a host list would only narrow what
		// the proxy lets through, and nothing has to use the proxy.
		c.AllowedHosts = nil
	}
	return c
}
