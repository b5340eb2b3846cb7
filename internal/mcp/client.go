package mcp

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// SourceClient is a server an editor passed for one session (ACP's
// session/new and session/load). The editor is the user's own program, so
// its servers need no trust or approval; their values are used as given,
// with no ${VAR} read from mx-claw's environment, and a stdio server's
// environment is what the editor declares plus the allow-listed base.
const SourceClient Source = "client"

// ClientPath is what names the origin of a client's servers in messages.
const ClientPath = "the editor (ACP)"

// ClientServer checks a server an editor passed and returns its entry.
// transport is "stdio" (or empty) with command, "http" or "sse" with url.
func ClientServer(name string, transport string, command string, args []string, env map[string]string,
	url string, headers map[string]string) (*Server, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	s := &Server{Name: name, Source: SourceClient, Path: ClientPath, Command: command,
		Args: slices.Clone(args), Env: maps.Clone(env), URL: url, Headers: maps.Clone(headers)}
	switch strings.ToLower(transport) {
	case "", "stdio":
		s.Transport = TransportStdio
		if strings.TrimSpace(command) == "" {
			return nil, errors.New(`a stdio server needs a "command"`)
		}
	case "http":
		s.Transport = TransportHTTP
	case "sse":
		s.Transport = TransportSSE
	default:
		return nil, fmt.Errorf("type %q: want stdio, http or sse", transport)
	}
	if s.Transport != TransportStdio {
		if url == "" {
			return nil, fmt.Errorf(`a %s server needs a "url"`, s.Transport)
		}
		if err := checkURL(url, fmt.Sprintf("%q", url)); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// literal is a client's entry as it is used: as given, no variables read.
func (s *Server) literal() *Expanded {
	return &Expanded{Command: s.Command, Args: slices.Clone(s.Args), Env: maps.Clone(s.Env),
		URL: s.URL, Headers: maps.Clone(s.Headers)}
}

// WithClient returns c with the servers an editor passed for a session
// added. A client's server replaces one of the same name from the user's
// settings or the project (which is then held, saying so): the editor is
// what the user drives the session from.
func (c *Config) WithClient(servers []*Server) *Config {
	if len(servers) == 0 {
		return c
	}
	out := *c
	out.Servers = nil
	out.Held = slices.Clone(c.Held)
	names := map[string]bool{}
	for _, s := range servers {
		names[s.Name] = true
	}
	for _, s := range c.Servers {
		if names[s.Name] {
			out.Held = append(out.Held, Held{Server: s, Shadowed: true,
				Reason: fmt.Sprintf("the editor passed a server named %q for this session, which is used instead", s.Name)})
			continue
		}
		out.Servers = append(out.Servers, s)
	}
	out.Servers = append(out.Servers, servers...)
	return &out
}
