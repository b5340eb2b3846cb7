package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
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
}

// entry is one registered tool with its compiled schema.
type entry struct {
	tool   Tool
	schema *argSchema
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
// is not a valid JSON schema of an object: draft 2020-12, or draft-07 if
// its "$schema" says so. Schemas may not load external references (a
// tool's schema must be self-contained), nor have references that lead
// back to where they started without going into a property or an item.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{
		tools:   slices.Clone(tools),
		entries: make(map[string]*entry, len(tools)),
	}
	for i, t := range tools {
		if t == nil {
			return nil, fmt.Errorf("register tool #%d: tool is nil", i)
		}
		info := t.Info()
		name := info.Name
		if err := checkToolName(name); err != nil {
			return nil, fmt.Errorf("register tool #%d: %w", i, err)
		}
		if _, dup := r.entries[name]; dup {
			return nil, fmt.Errorf("register tool %q: name already registered", name)
		}
		sch, err := compileSchema(info.Schema)
		if err != nil {
			return nil, fmt.Errorf("register tool %q: %w", name, err)
		}
		r.entries[name] = &entry{tool: t, schema: sch}
	}
	return r, nil
}

// With returns a registry of r's tools followed by extra (the tools of a
// session's MCP servers). r's compiled schemas are reused, so only extra's
// are compiled; r is not changed. The rules of NewRegistry apply to extra,
// and a name of extra may not be one of r's.
func (r *Registry) With(extra ...Tool) (*Registry, error) {
	if len(extra) == 0 {
		return r, nil
	}
	out := &Registry{
		tools:   slices.Concat(r.tools, extra),
		entries: make(map[string]*entry, len(r.entries)+len(extra)),
	}
	maps.Copy(out.entries, r.entries)
	for i, t := range extra {
		if t == nil {
			return nil, fmt.Errorf("register tool #%d: tool is nil", len(r.tools)+i)
		}
		info := t.Info()
		name := info.Name
		if err := checkToolName(name); err != nil {
			return nil, fmt.Errorf("register tool #%d: %w", len(r.tools)+i, err)
		}
		if _, dup := out.entries[name]; dup {
			return nil, fmt.Errorf("register tool %q: name already registered", name)
		}
		sch, err := compileSchema(info.Schema)
		if err != nil {
			return nil, fmt.Errorf("register tool %q: %w", name, err)
		}
		out.entries[name] = &entry{tool: t, schema: sch}
	}
	return out, nil
}

// CheckTool reports whether t could be registered: its name is valid and
// its schema compiles. A tool that fails it is left out of a registry
// rather than spoiling the whole set (an MCP server's tool whose schema
// uses a draft mx-claw cannot validate, say).
func CheckTool(t Tool) error {
	info := t.Info()
	if err := checkToolName(info.Name); err != nil {
		return err
	}
	_, err := compileSchema(info.Schema)
	return err
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
	var doc any
	if text := bytes.TrimSpace(args); len(text) == 0 {
		doc = map[string]any{}
	} else if err := json.Unmarshal(text, &doc); err != nil {
		// json.Unmarshal also refuses trailing data after the value.
		return &ArgumentError{Tool: name, Syntax: describeSyntaxError(err)}
	}
	if problems := e.schema.validate(doc); len(problems) > 0 {
		return &ArgumentError{Tool: name, Problems: problems}
	}
	return nil
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

// Compiling a schema. jsonschema-go parses it and resolves it, which
// checks regular expressions and references (refusing external ones). It
// does not check type names, so we do, and it does not show where
// references lead, so schemaIndex finds their targets the way the library
// does: to refuse reference cycles, which would make its Validate recurse
// until the process dies, and to let the pass in validate.go follow them.

// schemaBaseURI is the URI tool schemas are resolved against, so that
// relative "$id"s have an absolute base.
const schemaBaseURI = "mem:///tool-schema.json"

// The "$schema" values the library can validate; "" means 2020-12.
const (
	draft07     = "http://json-schema.org/draft-07/schema#"
	draft202012 = "https://json-schema.org/draft/2020-12/schema"
)

// knownDraft returns the "$schema" value the library knows for one a
// schema gives, which may be spelled with or without "https" or a final
// '#'.
func knownDraft(uri string) (string, bool) {
	switch strings.TrimSuffix(strings.Replace(uri, "https://", "http://", 1), "#") {
	case "":
		return "", true
	case "http://json-schema.org/draft-07/schema":
		return draft07, true
	case "http://json-schema.org/draft/2020-12/schema":
		return draft202012, true
	}
	return "", false
}

// jsonTypes are the type names a schema's "type" may use.
var jsonTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// argSchema is a tool's compiled argument schema.
type argSchema struct {
	resolved *jsonschema.Resolved
	root     *node
	// exact is set when the schema uses only keywords the pass covers,
	// so the pass alone decides.
	exact bool
}

// compileSchema parses, checks and resolves a tool's schema, and builds
// the node graph the pass walks.
func compileSchema(raw json.RawMessage) (*argSchema, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("parse schema: %w", err)
	}
	// raw is valid JSON now, so its first byte tells its kind.
	if k := rawKind(raw); k != "object" {
		return nil, fmt.Errorf("schema is a JSON %s, want an object", k)
	}
	if s.Type != "object" {
		return nil, errors.New(`schema must have "type": "object"`)
	}
	draft, ok := knownDraft(s.Schema)
	if !ok {
		return nil, fmt.Errorf("compile schema: unsupported $schema %q (want draft-07 or 2020-12)", s.Schema)
	}
	s.Schema = draft
	rs, err := s.Resolve(&jsonschema.ResolveOptions{BaseURI: schemaBaseURI, Loader: refuseLoader})
	if err != nil {
		return nil, fmt.Errorf("compile schema: %w", err)
	}
	ix, err := indexSchema(&s)
	if err != nil {
		return nil, fmt.Errorf("compile schema: %w", err)
	}
	if err := ix.checkRefs(); err != nil {
		return nil, fmt.Errorf("compile schema: %w", err)
	}
	b := builder{ix: ix, nodes: map[*jsonschema.Schema]*node{}, exact: true}
	root := b.node(&s)
	return &argSchema{resolved: rs, root: root, exact: b.exact}, nil
}

// refuseLoader keeps schemas from reading files or the network through
// "$ref".
func refuseLoader(*url.URL) (*jsonschema.Schema, error) {
	return nil, errors.New("external references are not supported")
}

// rawKind names the JSON type of a valid JSON text.
func rawKind(raw []byte) string {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return "object"
		case '[':
			return "array"
		case '"':
			return "string"
		case 't', 'f':
			return "boolean"
		case 'n':
			return "null"
		default:
			return "number"
		}
	}
	return "empty text"
}

// schemaIndex records where every subschema of a tool schema is, so that
// "$ref"s can be followed the way the library resolves them.
type schemaIndex struct {
	draft7 bool
	// paths maps the JSON pointer of each subschema, from the root, to it.
	paths map[string]*jsonschema.Schema
	// where is the inverse of paths.
	where map[*jsonschema.Schema]string
	// base is each subschema's base URI, without fragment.
	base map[*jsonschema.Schema]string
	// ids maps base URIs to the schemas that establish them.
	ids map[string]*jsonschema.Schema
	// anchors maps "<base>#<anchor>" to the schema with that anchor.
	anchors map[string]*jsonschema.Schema
	// dynamic maps a "$dynamicAnchor" name to the schemas declaring it.
	dynamic map[string][]*jsonschema.Schema
}

// indexSchema walks root, checks the type names it uses (the library does
// not) and records paths, base URIs and anchors.
func indexSchema(root *jsonschema.Schema) (*schemaIndex, error) {
	ix := &schemaIndex{
		draft7:  root.Schema == draft07,
		paths:   map[string]*jsonschema.Schema{},
		where:   map[*jsonschema.Schema]string{},
		base:    map[*jsonschema.Schema]string{},
		ids:     map[string]*jsonschema.Schema{},
		anchors: map[string]*jsonschema.Schema{},
		dynamic: map[string][]*jsonschema.Schema{},
	}
	ix.ids[schemaBaseURI] = root
	var walk func(s *jsonschema.Schema, path, base string) error
	walk = func(s *jsonschema.Schema, path, base string) error {
		for _, t := range s.Types {
			if !slices.Contains(jsonTypes, t) {
				return fmt.Errorf("at %s: unknown type %q", schemaLocation(path), t)
			}
		}
		if s.Type != "" && !slices.Contains(jsonTypes, s.Type) {
			return fmt.Errorf("at %s: unknown type %q", schemaLocation(path), s.Type)
		}
		if s.ID != "" && !(ix.draft7 && s.Ref != "") {
			// The library has checked the "$id"s; this follows how it
			// resolves them.
			id, err := url.Parse(s.ID)
			if err != nil {
				return fmt.Errorf("at %s: $id: %w", schemaLocation(path), err)
			}
			if ix.draft7 && id.Fragment != "" {
				// A draft-07 "$id": "#name" is an anchor.
				ix.anchors[base+"#"+id.Fragment] = s
			} else {
				u, _ := url.Parse(base)
				u = u.ResolveReference(id)
				u.Fragment = ""
				base = u.String()
				ix.ids[base] = s
			}
		}
		if s.Anchor != "" {
			ix.anchors[base+"#"+s.Anchor] = s
		}
		if s.DynamicAnchor != "" {
			ix.anchors[base+"#"+s.DynamicAnchor] = s
			ix.dynamic[s.DynamicAnchor] = append(ix.dynamic[s.DynamicAnchor], s)
		}
		ix.paths[path] = s
		ix.where[s] = path
		ix.base[s] = base
		var err error
		eachSubschema(s, func(key string, c *jsonschema.Schema) bool {
			err = walk(c, path+"/"+key, base)
			return err == nil
		})
		return err
	}
	if err := walk(root, "", schemaBaseURI); err != nil {
		return nil, err
	}
	return ix, nil
}

// schemaLocation renders the JSON pointer of a subschema for an error.
func schemaLocation(path string) string {
	if path == "" {
		return "the root"
	}
	return "'" + path + "'"
}

// eachSubschema calls f with every direct subschema of s and its JSON
// pointer from s (escaped, without the leading '/'), in a fixed order,
// until f returns false.
func eachSubschema(s *jsonschema.Schema, f func(key string, c *jsonschema.Schema) bool) bool {
	one := func(key string, c *jsonschema.Schema) bool { return c == nil || f(key, c) }
	list := func(key string, cs []*jsonschema.Schema) bool {
		for i, c := range cs {
			if !f(key+"/"+strconv.Itoa(i), c) {
				return false
			}
		}
		return true
	}
	set := func(key string, m map[string]*jsonschema.Schema) bool {
		if len(m) == 0 {
			return true
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if !f(key+"/"+escapePointer(k), m[k]) {
				return false
			}
		}
		return true
	}
	return set("$defs", s.Defs) && set("definitions", s.Definitions) &&
		set("dependencies", s.DependencySchemas) && set("dependentSchemas", s.DependentSchemas) &&
		set("properties", s.Properties) && set("patternProperties", s.PatternProperties) &&
		one("items", s.Items) && list("items", s.ItemsArray) && list("prefixItems", s.PrefixItems) &&
		one("additionalItems", s.AdditionalItems) && one("contains", s.Contains) &&
		one("unevaluatedItems", s.UnevaluatedItems) &&
		one("additionalProperties", s.AdditionalProperties) && one("propertyNames", s.PropertyNames) &&
		one("unevaluatedProperties", s.UnevaluatedProperties) &&
		list("allOf", s.AllOf) && list("anyOf", s.AnyOf) && list("oneOf", s.OneOf) &&
		one("not", s.Not) && one("if", s.If) && one("then", s.Then) && one("else", s.Else) &&
		one("contentSchema", s.ContentSchema)
}

// target returns the schema a reference in s points to, or nil if it
// cannot find it.
func (ix *schemaIndex) target(s *jsonschema.Schema, ref string) *jsonschema.Schema {
	u, err := url.Parse(ref)
	if err != nil {
		return nil
	}
	base, err := url.Parse(ix.base[s])
	if err != nil {
		return nil
	}
	u = base.ResolveReference(u)
	frag := u.Fragment
	u.Fragment = ""
	doc := ix.ids[u.String()]
	if doc == nil {
		return nil
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		return ix.anchors[u.String()+"#"+frag]
	}
	return ix.paths[ix.where[doc]+frag]
}

// checkRefs refuses schemas with a reference we cannot follow (the library
// resolved it, so that would be a difference between us) or with
// references that lead back to a schema for the same value, such as
// {"$ref": "#"} at the root: validating them would never end, and the
// library would overflow the stack and kill the process.
func (ix *schemaIndex) checkRefs() error {
	const (
		unseen = iota
		active
		done
	)
	state := map[*jsonschema.Schema]int{}
	var visit func(s *jsonschema.Schema) error
	visit = func(s *jsonschema.Schema) error {
		switch state[s] {
		case active:
			return fmt.Errorf("at %s: references form a cycle that never reaches a property or item",
				schemaLocation(ix.where[s]))
		case done:
			return nil
		}
		state[s] = active
		next, err := ix.inPlace(s)
		for _, t := range next {
			if err == nil {
				err = visit(t)
			}
		}
		state[s] = done
		return err
	}
	for _, p := range slices.Sorted(maps.Keys(ix.paths)) {
		if err := visit(ix.paths[p]); err != nil {
			return err
		}
	}
	return nil
}

// inPlace returns the schemas that apply to the same value as s (as
// opposed to a property or an item of it). A $dynamicRef may land on any
// schema with the anchor it names, so all of those are included.
func (ix *schemaIndex) inPlace(s *jsonschema.Schema) ([]*jsonschema.Schema, error) {
	next := slices.Concat(s.AllOf, s.AnyOf, s.OneOf)
	for _, c := range []*jsonschema.Schema{s.Not, s.If, s.Then, s.Else} {
		if c != nil {
			next = append(next, c)
		}
	}
	for _, m := range []map[string]*jsonschema.Schema{s.DependentSchemas, s.DependencySchemas} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			next = append(next, m[k])
		}
	}
	for _, ref := range []string{s.Ref, s.DynamicRef} {
		if ref == "" {
			continue
		}
		t := ix.target(s, ref)
		if t == nil {
			return nil, fmt.Errorf("at %s: cannot follow reference %q", schemaLocation(ix.where[s]), ref)
		}
		next = append(next, t)
	}
	if i := strings.IndexByte(s.DynamicRef, '#'); i >= 0 {
		next = append(next, ix.dynamic[s.DynamicRef[i+1:]]...)
	}
	return next, nil
}
