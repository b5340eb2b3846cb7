package mcp

import (
	"errors"
	"fmt"
	"strings"
)

// Variables in entries: ${NAME} and ${NAME:-default}, as Claude Code
// expands them in command, args, env, url and headers. A bare $NAME is
// kept as it is.

// ref is one ${…} in a string.
type ref struct {
	start, end int // of the whole ${…}
	name       string
	def        string
	hasDef     bool
}

// refs finds the ${…} of s; malformed ones are skipped (checkVars reports
// them).
func refs(s string) []ref {
	out, _ := scanRefs(s)
	return out
}

// scanRefs finds the ${…} of s and the first malformed one.
func scanRefs(s string) ([]ref, error) {
	var out []ref
	var bad error
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], "${")
		if j < 0 {
			break
		}
		start := i + j
		end := strings.IndexByte(s[start:], '}')
		if end < 0 {
			if bad == nil {
				bad = fmt.Errorf("unterminated ${ in %q", s)
			}
			break
		}
		end += start + 1
		body := s[start+2 : end-1]
		r := ref{start: start, end: end, name: body}
		if n, d, ok := strings.Cut(body, ":-"); ok {
			r.name, r.def, r.hasDef = n, d, true
		}
		if !validVarName(r.name) {
			if bad == nil {
				bad = fmt.Errorf("${%s}: only ${NAME} and ${NAME:-default} with an environment variable's name are supported", body)
			}
		} else {
			out = append(out, r)
		}
		i = end
	}
	return out, bad
}

func validVarName(n string) bool {
	if n == "" {
		return false
	}
	for i, c := range n {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// checkVars reports the first malformed ${…} of an entry.
func checkVars(s *Server) error {
	check := func(field, v string) error {
		if _, err := scanRefs(v); err != nil {
			return fmt.Errorf("%s: %w", field, err)
		}
		return nil
	}
	errs := []error{check("command", s.Command), check("url", s.URL)}
	for i, a := range s.Args {
		errs = append(errs, check(fmt.Sprintf("args[%d]", i), a))
	}
	for _, k := range sortedKeys(s.Env) {
		errs = append(errs, check("env."+k, s.Env[k]))
	}
	for _, k := range sortedKeys(s.Headers) {
		errs = append(errs, check("headers."+k, s.Headers[k]))
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// expander fills in variables for one entry.
type expander struct {
	lookup func(string) (string, bool)
	// refuse, if set, reports variables the entry may not read, with why.
	refuse func(name string) string
	err    error
}

// expand returns s with its variables filled in; the first problem is kept
// in x.err.
func (x *expander) expand(field, s string) string {
	rs := refs(s)
	if len(rs) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, r := range rs {
		b.WriteString(s[last:r.start])
		last = r.end
		if x.refuse != nil {
			if why := x.refuse(r.name); why != "" {
				x.fail(fmt.Errorf("%s: ${%s}: %s", field, r.name, why))
				continue
			}
		}
		v, ok := x.lookup(r.name)
		switch {
		case ok && v != "":
			b.WriteString(v)
		case r.hasDef:
			b.WriteString(r.def)
		case ok:
		default:
			x.fail(fmt.Errorf("%s: environment variable %s is not set (write ${%s:-default} to make it optional)", field, r.name, r.name))
		}
	}
	b.WriteString(s[last:])
	return b.String()
}

func (x *expander) fail(err error) {
	if x.err == nil {
		x.err = err
	}
}

// Expanded is a server entry with its variables filled in: what is run or
// connected to.
type Expanded struct {
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Headers map[string]string
}

// ErrVariable is matched by errors about an entry's ${VAR}s.
var ErrVariable = errors.New("variable")

// Expand fills in the entry's variables from lookup. refuse, if set, names
// variables the entry may not read and says why (a project's entry may not
// read the secret chain's variables).
func (s *Server) Expand(lookup func(string) (string, bool), refuse func(string) string) (*Expanded, error) {
	x := &expander{lookup: lookup, refuse: refuse}
	e := &Expanded{Command: x.expand("command", s.Command), URL: x.expand("url", s.URL)}
	for i, a := range s.Args {
		e.Args = append(e.Args, x.expand(fmt.Sprintf("args[%d]", i), a))
	}
	if len(s.Env) > 0 {
		e.Env = make(map[string]string, len(s.Env))
		for _, k := range sortedKeys(s.Env) {
			e.Env[k] = x.expand("env."+k, s.Env[k])
		}
	}
	if len(s.Headers) > 0 {
		e.Headers = make(map[string]string, len(s.Headers))
		for _, k := range sortedKeys(s.Headers) {
			e.Headers[k] = x.expand("headers."+k, s.Headers[k])
		}
	}
	if x.err != nil {
		return nil, &varError{x.err}
	}
	if s.Transport != TransportStdio {
		// Not shown: the variables may have put a secret in it.
		if err := checkURL(e.URL, "(as expanded)"); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// varError is an error about an entry's variables; it matches ErrVariable.
type varError struct{ err error }

func (e *varError) Error() string        { return e.err.Error() }
func (e *varError) Unwrap() error        { return e.err }
func (e *varError) Is(target error) bool { return target == ErrVariable }
