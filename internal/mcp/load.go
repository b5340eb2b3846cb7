package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/mx-claw/mx-claw/internal/safefile"
)

// ProjectFile is the name of a workspace's server list.
const ProjectFile = ".mcp.json"

// LoadProjectFile reads <workspace>/.mcp.json. A missing file gives no
// servers. A symbolic link as .mcp.json is refused, as the project's
// configuration must be in the project; so is a file over 1 MiB or one
// that is not a regular file.
func LoadProjectFile(workspace string) ([]*Server, []error) {
	path := filepath.Join(workspace, ProjectFile)
	data, err := safefile.ReadInTree(workspace, ProjectFile, safefile.DefaultMax)
	var le *safefile.LinkError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.As(err, &le):
		return nil, []error{&ConfigError{Path: path, Err: fmt.Errorf("refused: it is a symbolic link (to %s); "+
			"a project's server list must be a real file inside the project", le.Target)}}
	case err != nil:
		return nil, []error{&ConfigError{Path: path, Err: err}}
	}
	return ParseProjectFile(data, path)
}

// Config is what applies to a workspace: the servers its sessions may use,
// the client settings, and why other servers may not be used.
type Config struct {
	Servers  []*Server
	Settings Settings
	// Held are the project's servers that may not start, with the reason.
	Held []Held
	// Problems are the entries that cannot be used at all.
	Problems []error
}

// Held is a project server that may not start yet.
type Held struct {
	Server *Server
	// Reason says why, for people.
	Reason string
	// Untrusted is set when the workspace is not trusted; otherwise the
	// server waits for the user's approval (or is shadowed by a user
	// server of the same name, when Shadowed is set).
	Untrusted bool
	Shadowed  bool
}

// LoadOptions say where a workspace's configuration comes from.
type LoadOptions struct {
	// Home is $MX_CLAW_HOME (approvals).
	Home string
	// Workspace is the canonical workspace directory.
	Workspace string
	// UserPath is the user's settings file; UserServers and UserSettings
	// its "mcpServers" and "mcp" keys, raw.
	UserPath     string
	UserServers  json.RawMessage
	UserSettings json.RawMessage
	// Trusted says whether the user trusts the workspace.
	Trusted bool
}

// Load works out the servers of a workspace: the user's, and those of
// the project's .mcp.json that are allowed — only in a trusted workspace,
// each after the user approved it as written, and never one named like a
// user server (the user's wins). Malformed entries are left out and
// reported in Problems; only a malformed "mcp" settings key is an error.
func Load(opts LoadOptions) (*Config, error) {
	set, err := ParseSettings(opts.UserSettings, opts.UserPath)
	if err != nil {
		return nil, err
	}
	c := &Config{Settings: set}
	user, problems := ParseServers(opts.UserServers, SourceUser, opts.UserPath)
	c.Servers = append(c.Servers, user...)
	c.Problems = append(c.Problems, problems...)
	project, problems := LoadProjectFile(opts.Workspace)
	c.Problems = append(c.Problems, problems...)
	names := map[string]bool{}
	for _, s := range user {
		names[s.Name] = true
	}
	for _, s := range project {
		switch {
		case names[s.Name]:
			c.Held = append(c.Held, Held{Server: s, Shadowed: true,
				Reason: fmt.Sprintf("the user's settings define a server named %q, which is used instead", s.Name)})
			continue
		case !opts.Trusted:
			c.Held = append(c.Held, Held{Server: s, Untrusted: true,
				Reason: "the workspace is not trusted; servers of its .mcp.json start only in a trusted workspace"})
			continue
		}
		ok, err := IsApproved(opts.Home, opts.Workspace, s)
		if err != nil {
			return nil, err
		}
		if !ok {
			c.Held = append(c.Held, Held{Server: s,
				Reason: fmt.Sprintf("not approved yet; run `mx-claw mcp approve %s` in the workspace to allow it to start", s.Name)})
			continue
		}
		c.Servers = append(c.Servers, s)
	}
	return c, nil
}

// Find returns the server of c named name, or nil.
func (c *Config) Find(name string) *Server {
	for _, s := range c.Servers {
		if s.Name == name {
			return s
		}
	}
	return nil
}
