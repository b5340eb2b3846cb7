package mcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"
)

// Transport is how mx-claw talks to a server.
type Transport string

// The transports of Claude Code's format.
const (
	// TransportStdio runs the entry's command and speaks over its stdin
	// and stdout.
	TransportStdio Transport = "stdio"
	// TransportHTTP is the streamable-HTTP transport.
	TransportHTTP Transport = "http"
	// TransportSSE is the older HTTP+SSE transport.
	TransportSSE Transport = "sse"
)

// Source says which file a server comes from.
type Source string

// The sources of servers.
const (
	// SourceUser is the user's settings.json ("mcpServers").
	SourceUser Source = "user"
	// SourceProject is a workspace's .mcp.json.
	SourceProject Source = "project"
)

// Server is one entry of an mcpServers object, as written (variables not
// yet expanded).
type Server struct {
	// Name is the entry's key.
	Name string `json:"name"`
	// Source and Path say where the entry comes from.
	Source Source `json:"source"`
	Path   string `json:"path"`

	Transport Transport         `json:"type"`
	Command   string            `json:"command,omitempty"`
	Args      []string          `json:"args,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	URL       string            `json:"url,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
}

// entry is the JSON shape of one server entry; keys other tools add
// (description, disabled, alwaysAllow, …) are ignored.
type entry struct {
	Type    *string         `json:"type"`
	Command *string         `json:"command"`
	Args    json.RawMessage `json:"args"`
	Env     json.RawMessage `json:"env"`
	URL     *string         `json:"url"`
	Headers json.RawMessage `json:"headers"`
}

// ConfigError reports a server entry (or a whole mcpServers object) that
// cannot be used. The other entries of the file still are.
type ConfigError struct {
	// Path is the file; Server the entry's name, "" for the whole object.
	Path   string
	Server string
	Err    error
}

func (e *ConfigError) Error() string {
	if e.Server == "" {
		return fmt.Sprintf("%s: mcpServers: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("%s: MCP server %q: %v", e.Path, e.Server, e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// Is makes every ConfigError match ErrInvalidConfig.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// ParseServers reads an mcpServers object (raw; empty or null means none)
// from the file at path. Entries that cannot be used are left out and
// reported, each as a *ConfigError; the rest are returned sorted by name.
func ParseServers(raw json.RawMessage, source Source, path string) ([]*Server, []error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, []error{&ConfigError{Path: path, Err: errors.New("must be an object of server entries")}}
	}
	var out []*Server
	var errs []error
	for _, name := range sortedKeys(obj) {
		s, err := parseEntry(name, obj[name])
		if err != nil {
			errs = append(errs, &ConfigError{Path: path, Server: name, Err: err})
			continue
		}
		s.Source, s.Path = source, path
		out = append(out, s)
	}
	return out, errs
}

// ParseProjectFile reads the text of a .mcp.json: {"mcpServers": {…}}.
// Its other keys are ignored.
func ParseProjectFile(data []byte, path string) ([]*Server, []error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		return nil, []error{&ConfigError{Path: path, Err: fmt.Errorf("not a JSON object: %v", jsonMessage(err))}}
	}
	return ParseServers(top["mcpServers"], SourceProject, path)
}

func jsonMessage(err error) string {
	if err == nil {
		return "null"
	}
	return err.Error()
}

// parseEntry reads one entry and checks it.
func parseEntry(name string, raw json.RawMessage) (*Server, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	var e entry
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, errors.New("must be an object with a command or a url")
	}
	s := &Server{Name: name}
	var err error
	if s.Args, err = stringList(e.Args, "args"); err != nil {
		return nil, err
	}
	if s.Env, err = stringMap(e.Env, "env"); err != nil {
		return nil, err
	}
	if s.Headers, err = stringMap(e.Headers, "headers"); err != nil {
		return nil, err
	}
	if e.Command != nil {
		s.Command = *e.Command
	}
	if e.URL != nil {
		s.URL = *e.URL
	}
	switch {
	case e.Type != nil:
		switch t := strings.ToLower(*e.Type); t {
		case "stdio":
			s.Transport = TransportStdio
		case "http", "streamable-http", "streamablehttp":
			s.Transport = TransportHTTP
		case "sse":
			s.Transport = TransportSSE
		default:
			return nil, fmt.Errorf("type %q: want stdio, http or sse", *e.Type)
		}
	case s.Command != "":
		s.Transport = TransportStdio
	case s.URL != "":
		s.Transport = TransportHTTP
	default:
		return nil, errors.New(`has neither "command" nor "url"`)
	}
	switch s.Transport {
	case TransportStdio:
		if strings.TrimSpace(s.Command) == "" {
			return nil, errors.New(`a stdio server needs a "command"`)
		}
	default:
		if s.URL == "" {
			return nil, fmt.Errorf(`a %s server needs a "url"`, s.Transport)
		}
		if !strings.Contains(s.URL, "${") {
			if err := checkURL(s.URL, fmt.Sprintf("%q", s.URL)); err != nil {
				return nil, err
			}
		}
	}
	if err := checkVars(s); err != nil {
		return nil, err
	}
	return s, nil
}

// CheckName reports what is wrong with a server name, or nil: it must be
// 1 to 64 characters, without spaces or control characters.
func CheckName(name string) error {
	if name == "" {
		return errors.New("empty server name")
	}
	if len(name) > 64 {
		return fmt.Errorf("server name %.20q… is longer than 64 bytes", name)
	}
	for _, r := range name {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Errorf("server name %q has a space or control character", name)
		}
	}
	return nil
}

// checkURL accepts http and https URLs with a host and no user info (a
// token belongs in a header, where ${VAR} can supply it). show is how the
// URL is named in the error.
func checkURL(raw, show string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("url %s is not a valid URL", show)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("url %s must start with http:// or https://", show)
	case u.Host == "":
		return fmt.Errorf("url %s has no host", show)
	case u.User != nil:
		return errors.New("url must not hold a user name or password; pass credentials in headers")
	}
	return nil
}

func stringList(raw json.RawMessage, field string) ([]string, error) {
	if len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var out []string
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("%s must be an array of strings", field)
	}
	return out, nil
}

func stringMap(raw json.RawMessage, field string) (map[string]string, error) {
	if len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var out map[string]string
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("%s must be an object of strings", field)
	}
	if field == "env" {
		for k := range out {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				return nil, fmt.Errorf("env: invalid variable name %q", k)
			}
		}
	}
	return out, nil
}

// Hash identifies the entry as written: its transport, command, arguments,
// environment, URL and headers. An approval is for one hash.
func (s *Server) Hash() string {
	canon := struct {
		T Transport         `json:"t"`
		C string            `json:"c"`
		A []string          `json:"a"`
		E map[string]string `json:"e"`
		U string            `json:"u"`
		H map[string]string `json:"h"`
	}{s.Transport, s.Command, s.Args, s.Env, s.URL, s.Headers}
	b, _ := json.Marshal(canon) // maps marshal with sorted keys
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// Describe shows the entry in one line for people: the command line or
// the URL.
func (s *Server) Describe() string {
	if s.Transport == TransportStdio {
		return strings.Join(append([]string{s.Command}, s.Args...), " ")
	}
	return string(s.Transport) + " " + s.URL
}

// Variables returns the environment variables the entry reads with
// ${VAR}, sorted.
func (s *Server) Variables() []string {
	var names []string
	each := func(v string) {
		for _, r := range refs(v) {
			if !slices.Contains(names, r.name) {
				names = append(names, r.name)
			}
		}
	}
	each(s.Command)
	each(s.URL)
	for _, a := range s.Args {
		each(a)
	}
	for _, k := range sortedKeys(s.Env) {
		each(s.Env[k])
	}
	for _, k := range sortedKeys(s.Headers) {
		each(s.Headers[k])
	}
	slices.Sort(names)
	return names
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
