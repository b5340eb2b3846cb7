package tools

// Argument validation, in two layers.
//
// github.com/google/jsonschema-go implements draft-07 and draft 2020-12,
// and its package init is cheap (the package we used before compiled its
// meta-schemas at start: about 20,000 allocations on every run of the
// binary). Its Validate, though, stops at the first problem, and the model
// needs every problem at once to fix a call in one retry.
//
// So a pass of our own (collector.check, over a node graph built from the
// schema once, at NewRegistry) walks the arguments first and lists every
// problem it can see: types, enums, consts, numeric and length bounds,
// patterns, required, additional and dependent properties, array items,
// following $refs. Each of those keywords applies unconditionally, so a
// problem the pass reports is one the library would report too. Keywords
// the pass does not cover (allOf, anyOf, oneOf, not, if, uniqueItems,
// contains, unevaluated*, $dynamicRef) are left to the library: if the
// pass finds nothing, a schema that uses any of them is run through the
// library as well, and its one message becomes the one problem. A schema
// that uses none of them (every built-in tool's) never reaches the
// library at validation time; TestPassAgreesWithLibrary checks that the
// pass and the library agree on such schemas.

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// validate returns nil if doc, a decoded JSON value, matches the schema,
// and otherwise every problem it can name, in a stable order.
func (s *argSchema) validate(doc any) []string {
	if ps := collectProblems(s.root, doc); len(ps) > 0 || s.exact {
		return ps
	}
	if err := s.resolved.Validate(doc); err != nil {
		return []string{libraryProblem(err)}
	}
	return nil
}

// libraryProblem rewrites a jsonschema-go error as one problem. The
// library prefixes "validating <schema location>: " once per level; only
// the innermost location says anything, and it is a location in the
// schema, not in the arguments.
func libraryProblem(err error) string {
	msg, loc := err.Error(), ""
	for strings.HasPrefix(msg, "validating ") {
		l, rest, ok := strings.Cut(msg[len("validating "):], ": ")
		if !ok {
			break
		}
		loc, msg = l, rest
	}
	// anyOf lists the failure of each branch on a line of its own.
	msg = strings.ReplaceAll(strings.ReplaceAll(msg, ":\n", ": "), "\n", "; ")
	if loc == "" || loc == "root" {
		return msg
	}
	return fmt.Sprintf("%s (schema location '%s')", msg, loc)
}

// node is the part of a schema the pass checks. A nil *node accepts
// everything.
type node struct {
	reject   bool // the schema false
	types    []string
	enum     []any
	hasEnum  bool
	constant *any

	minimum, maximum, exclMin, exclMax, multipleOf *float64

	minLength, maxLength *int
	pattern              *regexp.Regexp

	minItems, maxItems *int
	prefix             []*node
	items              *node // for the items after prefix

	required   []string
	dependent  []dependency // sorted by prop
	props      map[string]*node
	known      []string // sorted names of props
	patterns   []patternNode
	additional *node
	closed     bool // "additionalProperties": false
	minProps   *int
	maxProps   *int

	ref *node // checked as well as the node itself
}

// dependency is one entry of "dependentRequired": if prop is there, needs
// must be too.
type dependency struct {
	prop  string
	needs []string
}

type patternNode struct {
	re *regexp.Regexp
	n  *node
}

// builder turns schemas into nodes, once each, so that recursive schemas
// make a finite graph.
type builder struct {
	ix    *schemaIndex
	nodes map[*jsonschema.Schema]*node
	// exact is cleared when a schema uses a keyword the pass does not
	// cover.
	exact bool
}

func (b *builder) node(s *jsonschema.Schema) *node {
	if s == nil {
		return nil
	}
	if n, ok := b.nodes[s]; ok {
		return n
	}
	if b.ix.draft7 && s.Ref != "" {
		// In draft-07 a $ref's siblings are ignored. checkRefs made
		// sure the target exists and that this recursion ends.
		n := b.node(b.ix.target(s, s.Ref))
		b.nodes[s] = n
		return n
	}
	n := &node{}
	b.nodes[s] = n // before the subschemas, for recursive schemas
	if isFalse(s) {
		n.reject = true
		return n
	}
	b.exact = b.exact && !beyondPass(s)
	n.types = s.Types
	if s.Type != "" {
		n.types = []string{s.Type}
	}
	n.enum, n.hasEnum = s.Enum, s.Enum != nil
	n.constant = s.Const
	n.minimum, n.maximum = s.Minimum, s.Maximum
	n.exclMin, n.exclMax = s.ExclusiveMinimum, s.ExclusiveMaximum
	n.multipleOf = s.MultipleOf
	n.minLength, n.maxLength = s.MinLength, s.MaxLength
	if s.Pattern != "" {
		n.pattern, _ = regexp.Compile(s.Pattern) // the library checked it
	}

	n.minItems, n.maxItems = s.MinItems, s.MaxItems
	prefix, items := s.PrefixItems, s.Items
	if b.ix.draft7 {
		prefix = s.ItemsArray
		if s.ItemsArray != nil {
			items = s.AdditionalItems
		}
	}
	for _, p := range prefix {
		n.prefix = append(n.prefix, b.node(p))
	}
	n.items = b.node(items)

	n.required = s.Required
	dependent := s.DependentRequired
	if b.ix.draft7 {
		dependent = s.DependencyStrings
	}
	for _, p := range slices.Sorted(maps.Keys(dependent)) {
		n.dependent = append(n.dependent, dependency{p, dependent[p]})
	}
	if len(s.Properties) > 0 {
		n.props = make(map[string]*node, len(s.Properties))
		for name, ps := range s.Properties {
			n.props[name] = b.node(ps)
		}
		n.known = slices.Sorted(maps.Keys(s.Properties))
	}
	for _, pat := range slices.Sorted(maps.Keys(s.PatternProperties)) {
		re, _ := regexp.Compile(pat) // the library checked it
		n.patterns = append(n.patterns, patternNode{re, b.node(s.PatternProperties[pat])})
	}
	if s.AdditionalProperties != nil {
		if isFalse(s.AdditionalProperties) {
			n.closed = true
		} else {
			n.additional = b.node(s.AdditionalProperties)
		}
	}
	n.minProps, n.maxProps = s.MinProperties, s.MaxProperties
	if s.Ref != "" {
		n.ref = b.node(b.ix.target(s, s.Ref))
	}
	return n
}

// beyondPass reports whether s uses a keyword that affects validation but
// that the pass does not check.
func beyondPass(s *jsonschema.Schema) bool {
	return s.AllOf != nil || s.AnyOf != nil || s.OneOf != nil || s.Not != nil ||
		s.If != nil || s.DependentSchemas != nil || s.DependencySchemas != nil ||
		s.Contains != nil || s.UniqueItems || s.UnevaluatedItems != nil ||
		s.UnevaluatedProperties != nil || s.PropertyNames != nil || s.DynamicRef != ""
}

// isFalse reports whether s is the schema false, which the library
// unmarshals as {"not": {}}. Like the library, it ignores any siblings:
// they cannot make a value valid.
func isFalse(s *jsonschema.Schema) bool {
	return s.Not != nil && reflect.ValueOf(*s.Not).IsZero()
}

// problem is one failure found by the pass.
type problem struct {
	path []string // JSON pointer tokens of the failing value
	msg  string
}

// collector walks a value along a node graph and gathers problems.
type collector struct {
	path []string
	ps   []problem
}

// collectProblems checks doc against n and returns every problem found:
// problems with a value before those inside it, siblings by name or
// index, each once. It returns nil if there is none, after a single
// allocation.
func collectProblems(n *node, doc any) []string {
	c := collector{path: make([]string, 0, 8)}
	c.check(n, doc)
	if len(c.ps) == 0 {
		return nil
	}
	slices.SortStableFunc(c.ps, func(a, b problem) int { return comparePaths(a.path, b.path) })
	var out []string
	for _, p := range c.ps {
		msg := p.msg
		if len(p.path) > 0 {
			msg = "at '" + jsonPointer(p.path) + "': " + msg
		}
		if !slices.Contains(out, msg) { // a $ref may repeat a check
			out = append(out, msg)
		}
	}
	return out
}

func (c *collector) add(format string, args ...any) {
	c.ps = append(c.ps, problem{path: slices.Clone(c.path), msg: fmt.Sprintf(format, args...)})
}

// at checks v, found under key, against n.
func (c *collector) at(key string, n *node, v any) {
	if n == nil {
		return
	}
	c.path = append(c.path, key)
	c.check(n, v)
	c.path = c.path[:len(c.path)-1]
}

func (c *collector) check(n *node, v any) {
	if n == nil {
		return
	}
	if n.reject {
		c.add("not allowed")
		return
	}
	if n.types != nil && !hasAnyType(v, n.types) {
		// The other keywords mostly concern one type; saying more
		// would be noise.
		c.add("got %s, want %s", jsonType(v), strings.Join(n.types, " or "))
		return
	}
	if n.hasEnum && !inEnum(v, n.enum) {
		if len(n.enum) == 1 {
			c.add("value must be %s", display(n.enum[0]))
		} else {
			want := make([]string, len(n.enum))
			for i, e := range n.enum {
				want[i] = display(e)
			}
			c.add("value must be one of %s", strings.Join(want, ", "))
		}
	}
	if n.constant != nil && !jsonschema.Equal(*n.constant, v) {
		c.add("value must be %s", display(*n.constant))
	}
	switch v := v.(type) {
	case float64:
		c.checkNumber(n, v)
	case string:
		c.checkString(n, v)
	case []any:
		c.checkArray(n, v)
	case map[string]any:
		c.checkObject(n, v)
	}
	c.check(n.ref, v)
}

func (c *collector) checkNumber(n *node, f float64) {
	if m := n.minimum; m != nil && f < *m {
		c.add("minimum: got %s, want %s", formatNumber(f), formatNumber(*m))
	}
	if m := n.maximum; m != nil && f > *m {
		c.add("maximum: got %s, want %s", formatNumber(f), formatNumber(*m))
	}
	if m := n.exclMin; m != nil && f <= *m {
		c.add("exclusiveMinimum: got %s, want %s", formatNumber(f), formatNumber(*m))
	}
	if m := n.exclMax; m != nil && f >= *m {
		c.add("exclusiveMaximum: got %s, want %s", formatNumber(f), formatNumber(*m))
	}
	if m := n.multipleOf; m != nil {
		// The library's test, so that both agree.
		if _, frac := math.Modf(f / *m); frac != 0 {
			c.add("multipleOf: got %s, want %s", formatNumber(f), formatNumber(*m))
		}
	}
}

func (c *collector) checkString(n *node, s string) {
	if n.minLength != nil || n.maxLength != nil {
		l := utf8.RuneCountInString(s)
		if m := n.minLength; m != nil && l < *m {
			c.add("minLength: got %d, want %d", l, *m)
		}
		if m := n.maxLength; m != nil && l > *m {
			c.add("maxLength: got %d, want %d", l, *m)
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		c.add("%s does not match pattern %s", quote(shorten(s)), quote(n.pattern.String()))
	}
}

func (c *collector) checkArray(n *node, a []any) {
	if m := n.minItems; m != nil && len(a) < *m {
		c.add("minItems: got %d, want %d", len(a), *m)
	}
	if m := n.maxItems; m != nil && len(a) > *m {
		c.add("maxItems: got %d, want %d", len(a), *m)
	}
	for i, item := range a {
		in := n.items
		if i < len(n.prefix) {
			in = n.prefix[i]
		}
		if in != nil {
			c.at(strconv.Itoa(i), in, item)
		}
	}
}

func (c *collector) checkObject(n *node, o map[string]any) {
	var missing []string
	for _, r := range n.required {
		if _, ok := o[r]; !ok && !slices.Contains(missing, r) {
			missing = append(missing, r)
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		c.add("missing property %s", quote(missing[0]))
	default:
		c.add("missing properties %s", joinQuoted(missing))
	}
	for _, dep := range n.dependent {
		if _, ok := o[dep.prop]; !ok {
			continue
		}
		var lack []string
		for _, d := range dep.needs {
			if _, ok := o[d]; !ok {
				lack = append(lack, d)
			}
		}
		if len(lack) > 0 {
			c.add("properties %s required, if %s exists", joinQuoted(lack), quote(dep.prop))
		}
	}
	if m := n.minProps; m != nil && len(o) < *m {
		c.add("minProperties: got %d, want %d", len(o), *m)
	}
	if m := n.maxProps; m != nil && len(o) > *m {
		c.add("maxProperties: got %d, want %d", len(o), *m)
	}
	// Map order does not matter: problems are sorted by path at the end.
	var extra []string
	for k, v := range o {
		sub, declared := n.props[k]
		c.at(k, sub, v)
		matched := false
		for _, p := range n.patterns {
			if p.re.MatchString(k) {
				matched = true
				c.at(k, p.n, v)
			}
		}
		switch {
		case declared || matched:
		case n.closed:
			extra = append(extra, k)
		default:
			c.at(k, n.additional, v)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		msg := "additional properties " + joinQuoted(extra) + " not allowed"
		if len(n.known) > 0 {
			msg += " (known properties: " + strings.Join(n.known, ", ") + ")"
		}
		c.add("%s", msg)
	}
}

// hasAnyType reports whether v has one of the types.
func hasAnyType(v any, types []string) bool {
	for _, t := range types {
		if hasType(v, t) {
			return true
		}
	}
	return false
}

// inEnum reports whether v equals one of the values.
func inEnum(v any, values []any) bool {
	for _, e := range values {
		if jsonschema.Equal(e, v) {
			return true
		}
	}
	return false
}

// hasType reports whether v, as decoded by encoding/json, has the JSON
// schema type t. As in the library, 10.0 is an integer.
func hasType(v any, t string) bool {
	switch t {
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f)
	case "number":
		_, ok := v.(float64)
		return ok
	default:
		return jsonType(v) == t
	}
}

// jsonType names the JSON type of a value decoded by encoding/json.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
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

// comparePaths orders JSON pointer token lists: a prefix first, array
// indices by number, other tokens as strings.
func comparePaths(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] == b[i] {
			continue
		}
		x, errX := strconv.Atoi(a[i])
		y, errY := strconv.Atoi(b[i])
		if errX == nil && errY == nil && x != y {
			return x - y
		}
		return strings.Compare(a[i], b[i])
	}
	return len(a) - len(b)
}

// jsonPointer renders tokens as an RFC 6901 pointer.
func jsonPointer(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		sb.WriteString(escapePointer(t))
	}
	return sb.String()
}

// escapePointer escapes one JSON pointer token.
func escapePointer(t string) string {
	if !strings.ContainsAny(t, "~/") {
		return t
	}
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}

// quote renders s in single quotes, escaped as a Go string would be
// ("a\nb" becomes 'a\nb').
func quote(s string) string {
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
	return "'" + strings.ReplaceAll(q, "'", `\'`) + "'"
}

// joinQuoted quotes each string and joins them with ", ".
func joinQuoted(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = quote(s)
	}
	return strings.Join(q, ", ")
}

// display renders a JSON value from a schema in a message.
func display(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return quote(v)
	case float64:
		return formatNumber(v)
	case bool:
		return strconv.FormatBool(v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return "value"
		}
		return string(b)
	}
}

// formatNumber renders a JSON number the way it is usually written: no
// exponent unless it is very large or very small.
func formatNumber(f float64) string {
	if a := math.Abs(f); a != 0 && (a >= 1e21 || a < 1e-6) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// shorten cuts a string value quoted back to the model, which may be a
// whole file, to its first 64 characters.
func shorten(s string) string {
	const maxRunes = 64
	if len(s) <= maxRunes {
		return s
	}
	n := 0
	for i := range s {
		if n == maxRunes {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
