package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// maxToolNameLen is the longest tool name OpenAI-compatible providers
// accept.
const maxToolNameLen = 64

// Registry is the fixed set of tools offered to the model in a session. It
// compiles every tool's schema once, when it is built, so validating a
// call is cheap. A Registry is immutable after NewRegistry and safe for
// concurrent use.
type Registry struct {
	tools   []Tool
	entries map[string]*entry
	printer *message.Printer
}

// entry is one registered tool with its compiled schema.
type entry struct {
	tool   Tool
	schema *jsonschema.Schema
	// props are the names of the top-level properties the schema
	// declares, sorted, to suggest when the model uses an unknown one.
	props []string
}

// ArgumentError reports call arguments that are not valid JSON or do not
// match the tool's schema. Its message is written for the model: it names
// every problem and where it is, so one retry can fix them all.
type ArgumentError struct {
	// Tool is the name of the tool the arguments were meant for.
	Tool string
	// Syntax is the JSON parse error, or nil if the arguments parsed.
	Syntax error
	// Problems lists every schema failure, in a stable order. Each is
	// prefixed with the JSON pointer of the offending value ("at
	// '/limit': got string, want integer") unless it concerns the whole
	// argument object ("missing property 'path'").
	Problems []string
}

// Error returns "invalid JSON arguments: <parse error>" or "invalid
// arguments: <problem>; <problem>…".
func (e *ArgumentError) Error() string {
	if e.Syntax != nil {
		return "invalid JSON arguments: " + e.Syntax.Error()
	}
	return "invalid arguments: " + strings.Join(e.Problems, "; ")
}

// Unwrap returns the JSON parse error, if any.
func (e *ArgumentError) Unwrap() error { return e.Syntax }

// NewRegistry returns a registry of tools, offered in the order given. It
// fails if a name is empty, not a valid function name for the providers
// (letters, digits, '_' and '-', at most 64), or used twice, or if a schema
// is not a valid JSON schema (draft 2020-12 unless it says otherwise) of an
// object. Schemas may not load external references: a tool's schema must
// be self-contained.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{
		tools:   slices.Clone(tools),
		entries: make(map[string]*entry, len(tools)),
		printer: message.NewPrinter(language.English),
	}
	for i, t := range tools {
		if t == nil {
			return nil, fmt.Errorf("register tool #%d: tool is nil", i)
		}
		name := t.Name()
		if err := checkToolName(name); err != nil {
			return nil, fmt.Errorf("register tool #%d: %w", i, err)
		}
		if _, dup := r.entries[name]; dup {
			return nil, fmt.Errorf("register tool %q: name already registered", name)
		}
		e, err := compileEntry(t)
		if err != nil {
			return nil, fmt.Errorf("register tool %q: %w", name, err)
		}
		r.entries[name] = e
	}
	return r, nil
}

// checkToolName reports whether name is acceptable as a function name to
// OpenAI-compatible providers.
func checkToolName(name string) error {
	if name == "" {
		return errors.New("empty tool name")
	}
	if len(name) > maxToolNameLen {
		return fmt.Errorf("tool name %q is longer than %d bytes", name, maxToolNameLen)
	}
	for _, c := range []byte(name) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' ||
			c >= '0' && c <= '9' || c == '_' || c == '-'
		if !ok {
			return fmt.Errorf("tool name %q may only hold letters, digits, '_' and '-'", name)
		}
	}
	return nil
}

// compileEntry compiles t's schema with a compiler of its own, so schema
// ids of unrelated tools (MCP servers, say) cannot clash.
func compileEntry(t Tool) (*entry, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(t.Schema()))
	if err != nil {
		return nil, fmt.Errorf("parse schema: %w", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema is a JSON %s, want an object", jsonKind(doc))
	}
	if typ, ok := obj["type"].(string); !ok || typ != "object" {
		return nil, errors.New(`schema must have "type": "object"`)
	}

	const url = "mem:///tool-schema.json"
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuseLoader{})
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("add schema: %w", err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("compile schema: %w", err)
	}

	e := &entry{tool: t, schema: sch}
	if props, ok := obj["properties"].(map[string]any); ok {
		for p := range props {
			e.props = append(e.props, p)
		}
		slices.Sort(e.props)
	}
	return e, nil
}

// refuseLoader keeps schemas from reading files or the network through
// "$ref".
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema references %s: external references are not supported", url)
}

// Lookup returns the tool registered under name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	e, ok := r.entries[name]
	if !ok {
		return nil, false
	}
	return e.tool, true
}

// Tools returns the registered tools in registration order. The order is
// stable so the tool list sent to the provider is identical on every step
// (which keeps prompt caches warm). The slice is a copy.
func (r *Registry) Tools() []Tool {
	return slices.Clone(r.tools)
}

// Validate checks a call's raw argument text against the schema of the tool
// registered under name. Empty (or all-blank) text counts as "{}". It
// returns an error wrapping [ErrUnknownTool] for an unknown name and an
// [*ArgumentError] for text that is not JSON or does not match the schema;
// the schema error lists every problem at once.
func (r *Registry) Validate(name string, args json.RawMessage) error {
	e, ok := r.entries[name]
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownTool, name)
	}
	text := bytes.TrimSpace(args)
	if len(text) == 0 {
		text = []byte("{}")
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return &ArgumentError{Tool: name, Syntax: describeSyntaxError(err)}
	}
	err = e.schema.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("validate arguments of %s: %w", name, err)
	}
	return &ArgumentError{Tool: name, Problems: r.problems(e, ve)}
}

// describeSyntaxError adds the byte offset to a JSON syntax error, which
// the decoder leaves out of the message.
func describeSyntaxError(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("%w (at byte %d)", err, se.Offset)
	}
	return err
}

// problems flattens a validation error tree into one line per failing
// leaf: problems with the whole object first, then the others by JSON
// pointer, deduplicated, so the message is stable.
func (r *Registry) problems(e *entry, ve *jsonschema.ValidationError) []string {
	type problem struct{ ptr, msg string }
	var ps []problem
	var walk func(v *jsonschema.ValidationError)
	walk = func(v *jsonschema.ValidationError) {
		if len(v.Causes) > 0 {
			for _, c := range v.Causes {
				walk(c)
			}
			return
		}
		p := problem{ptr: jsonPointer(v.InstanceLocation), msg: v.ErrorKind.LocalizedString(r.printer)}
		if _, ok := v.ErrorKind.(*kind.AdditionalProperties); ok && p.ptr == "" && len(e.props) > 0 {
			p.msg += " (known properties: " + strings.Join(e.props, ", ") + ")"
		}
		ps = append(ps, p)
	}
	walk(ve)
	if len(ps) == 0 {
		// A tree without leaves should not happen; fall back to the
		// library's own rendering rather than saying nothing.
		return []string{ve.LocalizedError(r.printer)}
	}
	slices.SortFunc(ps, func(a, b problem) int {
		if c := strings.Compare(a.ptr, b.ptr); c != 0 {
			return c
		}
		return strings.Compare(a.msg, b.msg)
	})
	ps = slices.Compact(ps)
	out := make([]string, len(ps))
	for i, p := range ps {
		if p.ptr == "" {
			out[i] = p.msg
		} else {
			out[i] = fmt.Sprintf("at '%s': %s", p.ptr, p.msg)
		}
	}
	return out
}

// jsonPointer renders instance location tokens as an RFC 6901 pointer.
func jsonPointer(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		sb.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return sb.String()
}

// jsonKind names the JSON type of a value decoded by jsonschema.UnmarshalJSON.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprintf("%T", v)
	}
}
