package tools

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestValidateProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		schema string
		args   string
		want   string // "" for valid
	}{
		{
			name:   "nested object",
			schema: `{"type":"object","properties":{"opts":{"type":"object","properties":{"n":{"type":"integer","maximum":3}},"required":["n","m"],"additionalProperties":false}}}`,
			args:   `{"opts":{"n":4,"x":1}}`,
			want:   "at '/opts': missing property 'm'; at '/opts': additional properties 'x' not allowed (known properties: n); at '/opts/n': maximum: got 4, want 3",
		},
		{
			name:   "indices by number",
			schema: `{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}}}}`,
			args:   `{"a":[0,1,2,3,4,5,6,7,8,9,"x",11,"y"]}`,
			want:   "at '/a/10': got string, want integer; at '/a/12': got string, want integer",
		},
		{
			name:   "several missing",
			schema: `{"type":"object","required":["b","a","b"]}`,
			args:   `{}`,
			want:   "missing properties 'b', 'a'",
		},
		{
			name:   "local ref and siblings",
			schema: `{"type":"object","$defs":{"n":{"type":"integer"}},"properties":{"x":{"$ref":"#/$defs/n"},"y":{"$ref":"#/$defs/n","minimum":3}}}`,
			args:   `{"x":"s","y":1}`,
			want:   "at '/x': got string, want integer; at '/y': minimum: got 1, want 3",
		},
		{
			name:   "draft-07 ref ignores siblings",
			schema: `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","definitions":{"n":{"type":"integer"}},"properties":{"x":{"$ref":"#/definitions/n","minimum":3}}}`,
			args:   `{"x":1.5}`,
			want:   "at '/x': got number, want integer",
		},
		{
			name:   "draft-07 ref siblings valid",
			schema: `{"$schema":"https://json-schema.org/draft-07/schema","type":"object","definitions":{"n":{"type":"integer"}},"properties":{"x":{"$ref":"#/definitions/n","minimum":3}}}`,
			args:   `{"x":1}`,
		},
		{
			name:   "recursive schema",
			schema: `{"type":"object","$defs":{"tree":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/tree"}},"name":{"type":"string"}},"additionalProperties":false}},"properties":{"root":{"$ref":"#/$defs/tree"}}}`,
			args:   `{"root":{"kids":[{"name":1},{"kids":[{"nam":"x"}]}]}}`,
			want: "at '/root/kids/0/name': got number, want string; " +
				"at '/root/kids/1/kids/0': additional properties 'nam' not allowed (known properties: kids, name)",
		},
		{
			name:   "pattern and additional schemas",
			schema: `{"type":"object","patternProperties":{"^x_":{"type":"string"}},"additionalProperties":{"type":"boolean"}}`,
			args:   `{"x_a":1,"b":2,"x_c":"ok","d":true}`,
			want:   "at '/b': got number, want boolean; at '/x_a': got number, want string",
		},
		{
			name:   "strings",
			schema: `{"type":"object","properties":{"s":{"type":"string","minLength":3,"pattern":"^[a-z]+$"},"u":{"type":"string","maxLength":2}}}`,
			args:   `{"s":"A","u":"éé"}`,
			want:   "at '/s': minLength: got 1, want 3; at '/s': 'A' does not match pattern '^[a-z]+$'",
		},
		{
			name:   "long value shortened",
			schema: `{"type":"object","properties":{"s":{"type":"string","pattern":"^a"}}}`,
			args:   `{"s":"` + strings.Repeat("b", 100) + `"}`,
			want:   "at '/s': '" + strings.Repeat("b", 64) + "…' does not match pattern '^a'",
		},
		{
			name:   "enum const and type lists",
			schema: `{"type":"object","properties":{"e":{"enum":[1,"x",null]},"one":{"enum":["only"]},"c":{"const":true},"t":{"type":["string","null"]}}}`,
			args:   `{"e":2,"one":"other","c":false,"t":1}`,
			want: "at '/c': value must be true; at '/e': value must be one of 1, 'x', null; " +
				"at '/one': value must be 'only'; at '/t': got number, want string or null",
		},
		{
			name:   "numbers",
			schema: `{"type":"object","properties":{"a":{"exclusiveMinimum":0},"b":{"multipleOf":0.5},"c":{"type":"number","exclusiveMaximum":1e21}}}`,
			args:   `{"a":0,"b":0.25,"c":1e22}`,
			want:   "at '/a': exclusiveMinimum: got 0, want 0; at '/b': multipleOf: got 0.25, want 0.5; at '/c': exclusiveMaximum: got 1e+22, want 1e+21",
		},
		{
			name:   "dependent required and property counts",
			schema: `{"type":"object","dependentRequired":{"a":["b","c"]},"maxProperties":1}`,
			args:   `{"a":1,"c":1}`,
			want:   "properties 'b' required, if 'a' exists; maxProperties: got 2, want 1",
		},
		{
			name:   "false subschema",
			schema: `{"type":"object","properties":{"old":false}}`,
			args:   `{"old":1}`,
			want:   "at '/old': not allowed",
		},
		{
			name:   "keys needing escapes",
			schema: `{"type":"object","properties":{"a/b":{"type":"string"},"c~d":{"type":"string"}}}`,
			args:   `{"a/b":1,"c~d":2}`,
			want:   "at '/a~1b': got number, want string; at '/c~0d': got number, want string",
		},
		{
			name:   "library fallback oneOf",
			schema: `{"type":"object","properties":{"x":{"oneOf":[{"type":"string"},{"type":"integer"}]}}}`,
			args:   `{"x":1.5}`,
			want:   "oneOf: did not validate against any of [<anonymous schema> <anonymous schema>] (schema location '/properties/x')",
		},
		{
			name:   "library fallback anyOf at root",
			schema: `{"type":"object","anyOf":[{"required":["a"]},{"required":["b"]}]}`,
			args:   `{}`,
			want: `anyOf: did not validate against any of [<anonymous schema> <anonymous schema>]: ` +
				`validating /anyOf/0: required: missing properties: ["a"]; validating /anyOf/1: required: missing properties: ["b"]`,
		},
		{
			name:   "library fallback dynamicRef",
			schema: `{"type":"object","$dynamicAnchor":"node","properties":{"kids":{"type":"array","items":{"$dynamicRef":"#node"}},"v":{"type":"integer"}}}`,
			args:   `{"kids":[{"v":1},{"v":"x"}]}`,
			want:   `type: x has type "string", want "integer" (schema location '/properties/v')`,
		},
		{
			name:   "own problems before the library",
			schema: `{"type":"object","properties":{"x":{"oneOf":[{"type":"string"},{"type":"integer"}]},"y":{"type":"string"}}}`,
			args:   `{"x":1.5,"y":1}`,
			want:   "at '/y': got number, want string",
		},
		{
			name:   "library accepts",
			schema: `{"type":"object","properties":{"x":{"oneOf":[{"type":"string"},{"type":"integer"}]}}}`,
			args:   `{"x":2}`,
		},
		{
			name:   "format is an annotation",
			schema: `{"type":"object","properties":{"x":{"type":"string","format":"email"}}}`,
			args:   `{"x":"not an email"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := NewRegistry(fakeTool{name: "t", schema: tt.schema})
			if err != nil {
				t.Fatal(err)
			}
			err = r.Validate("t", json.RawMessage(tt.args))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate(%s) = %v, want nil", tt.args, err)
			case tt.want == "":
			case err == nil:
				t.Fatalf("Validate(%s) = nil, want %s", tt.args, tt.want)
			case err.Error() != "invalid arguments: "+tt.want:
				t.Errorf("Validate(%s)\n got: %s\nwant: invalid arguments: %s", tt.args, err, tt.want)
			}
		})
	}
}

func TestCompileSchemaErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		schema string
		want   string
	}{
		{`{"type":"object","$ref":"#"}`, "at the root: references form a cycle"},
		{`{"type":"object","properties":{"x":{"$ref":"#/properties/x"}}}`, "at '/properties/x': references form a cycle"},
		{`{"type":"object","$defs":{"a":{"allOf":[{"$ref":"#/$defs/b"}]},"b":{"not":{"$ref":"#/$defs/a"}}}}`, "references form a cycle"},
		{`{"type":"object","$defs":{"a":{"$anchor":"A","$ref":"#A"}}}`, "references form a cycle"},
		{`{"type":"object","$defs":{"a":{"$id":"http://x/a.json","$ref":"a.json"}}}`, "references form a cycle"},
		{`{"type":"object","$id":"rel.json","$defs":{"a":{"$ref":"rel.json#/$defs/a"}}}`, "references form a cycle"},
		{`{"type":"object","$dynamicAnchor":"n","allOf":[{"$dynamicRef":"#n"}]}`, "at the root: references form a cycle"},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`, "unsupported $schema"},
		{`{"type":"object","properties":{"x":{"type":["string","nope"]}}}`, `at '/properties/x': unknown type "nope"`},
		{`{"type":"object","properties":{"x":{"pattern":"("}}}`, "compile schema"},
		{`{"type":"object","properties":{"x":{"$ref":"#/$defs/missing"}}}`, "compile schema"},
		{`{"type":"object","properties":{"x":{"$ref":"https://example.com/s.json"}}}`, "external references are not supported"},
		{`null`, "schema is a JSON null, want an object"},
		{`{"type":["object"]}`, `"type": "object"`},
	}
	for _, tt := range tests {
		_, err := NewRegistry(fakeTool{name: "t", schema: tt.schema})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewRegistry(%s) error = %v, want it to contain %q", tt.schema, err, tt.want)
		}
	}
	// A reference back to the root through a property is fine: each
	// step goes one level into the arguments.
	if _, err := NewRegistry(fakeTool{name: "t", schema: `{"type":"object","properties":{"x":{"$ref":"#"}}}`}); err != nil {
		t.Errorf("recursive schema refused: %v", err)
	}
}

// exactSchemas use only keywords the pass covers, so the library is never
// run for them.
var exactSchemas = []string{
	readSchema,
	`{"type":"object","properties":{"n":{"type":"number","minimum":-1.5,"maximum":10,"multipleOf":0.5},` +
		`"i":{"type":["integer","null"],"exclusiveMinimum":0,"exclusiveMaximum":5},` +
		`"s":{"type":"string","minLength":1,"maxLength":3,"pattern":"^[ab]"},` +
		`"e":{"enum":[1,"a",null,true,[1],{"k":1}]},"c":{"const":{"k":[1,2]}},` +
		`"a":{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"integer"},"minItems":1,"maxItems":3},` +
		`"o":{"type":"object","properties":{"k":{"type":"string"}},"required":["k"],"additionalProperties":{"type":"integer"},"minProperties":1,"maxProperties":2}},` +
		`"patternProperties":{"^x":{"type":"boolean"}},"additionalProperties":false,"dependentRequired":{"x1":["i"]}}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","definitions":{"t":{"type":"object","properties":{"k":{"type":"array","items":{"$ref":"#/definitions/t"}},"v":{"type":"integer"}}}},` +
		`"properties":{"t":{"$ref":"#/definitions/t","maxProperties":0},"a":{"type":"array","items":[{"type":"string"}],"additionalItems":{"type":"boolean"}}},"dependencies":{"a":["t"]}}`,
	`{"type":"object","properties":{"f":false,"t":true,"r":{"$ref":"#/properties/t"}}}`,
}

// TestPassAgreesWithLibrary checks, on random arguments, that the pass and
// jsonschema-go agree on exact schemas, and that on other schemas every
// call the pass rejects the library rejects too.
func TestPassAgreesWithLibrary(t *testing.T) {
	t.Parallel()
	inexact := []string{
		`{"type":"object","properties":{"n":{"type":"integer","oneOf":[{"minimum":3},{"maximum":1}]},"s":{"type":"string"}},"anyOf":[{"required":["n"]},{"required":["s"]}]}`,
		`{"type":"object","properties":{"a":{"type":"array","uniqueItems":true,"contains":{"type":"string"},"items":{"type":["string","integer"]}}},"if":{"required":["a"]},"then":{"maxProperties":1}}`,
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i, src := range append(exactSchemas, inexact...) {
		s, err := compileSchema(json.RawMessage(src))
		if err != nil {
			t.Fatalf("schema %d: %v", i, err)
		}
		if want := i < len(exactSchemas); s.exact != want {
			t.Errorf("schema %d: exact = %v, want %v", i, s.exact, want)
		}
		agree := func(doc map[string]any) bool {
			ours := collectProblems(s.root, doc)
			lib := s.resolved.Validate(doc)
			if len(ours) > 0 && lib == nil || s.exact && len(ours) == 0 && lib != nil {
				raw, _ := json.Marshal(doc)
				t.Fatalf("schema %d, arguments %s:\npass: %q\nlibrary: %v", i, raw, ours, lib)
			}
			return lib == nil
		}
		// Random arguments, then every valid one found with one
		// property set to each of a list of awkward values.
		keys := propertyNames(t, src)
		var valid []map[string]any
		for range 3000 {
			if doc := randomObject(rng, keys, 0); agree(doc) && len(valid) < 60 {
				valid = append(valid, doc)
			}
		}
		for _, doc := range valid {
			for _, k := range keys {
				for _, v := range edgeValues {
					d := maps.Clone(doc)
					d[k] = v
					agree(d)
				}
			}
		}
	}
}

// edgeValues are values on either side of the bounds the test schemas
// use.
var edgeValues = []any{
	nil, true, false, -2.0, -1.5, -1.0, 0.0, 0.25, 0.5, 1.0, 2.0, 2.5, 3.0, 5.0, 10.0, 10.5, 11.0,
	1e22, -1e22, 1e-7, "", "a", "b", "ab", "abc", "abcd", "é", "éé", "aéé", "k", "x",
	[]any{}, []any{"a"}, []any{"a", 1.0}, []any{1.0, 2.0, 3.0, 4.0}, []any{"a", 1.0, 2.0, 3.0}, []any{"a", true}, []any{1.0},
	[]any{map[string]any{}}, []any{map[string]any{"v": 1.5}},
	map[string]any{}, map[string]any{"k": "a"}, map[string]any{"k": 1.0}, map[string]any{"k": "a", "z": 1.0},
	map[string]any{"k": "a", "z": 1.5}, map[string]any{"k": []any{1.0, 2.0}}, map[string]any{"v": 1.0},
}

// propertyNames collects every property name a schema mentions, so that
// random arguments hit them.
func propertyNames(t *testing.T, src string) []string {
	var doc any
	if err := json.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	names := []string{"x1", "zz"}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, c := range v {
				if k == "properties" || k == "dependentRequired" || k == "dependencies" {
					if m, ok := c.(map[string]any); ok {
						for p := range m {
							names = append(names, p)
						}
					}
				}
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(doc)
	return names
}

func randomObject(rng *rand.Rand, keys []string, depth int) map[string]any {
	o := map[string]any{}
	for range rng.IntN(5) {
		o[keys[rng.IntN(len(keys))]] = randomValue(rng, keys, depth+1)
	}
	return o
}

func randomValue(rng *rand.Rand, keys []string, depth int) any {
	n := 10
	if depth < 3 {
		n = 12
	}
	switch rng.IntN(n) {
	case 0:
		return nil
	case 1:
		return rng.IntN(2) == 0
	case 2:
		return float64(rng.IntN(12) - 2)
	case 3:
		return float64(rng.IntN(40)-10) / 4
	case 4:
		return []float64{1e22, -1e22, 0.1, 1e-7, 5}[rng.IntN(5)]
	case 5, 6:
		return []string{"", "a", "b", "ab", "abc", "abcd", "é", "x", "k"}[rng.IntN(9)]
	case 7:
		return []any{float64(1), "a", nil, true, []any{float64(1)}, map[string]any{"k": float64(1)},
			map[string]any{"k": []any{float64(1), float64(2)}}}[rng.IntN(7)]
	case 8, 9:
		a := make([]any, rng.IntN(5))
		for i := range a {
			a[i] = []any{"a", float64(1), true, 1.5, "b"}[rng.IntN(5)]
		}
		return a
	case 10:
		a := make([]any, rng.IntN(4))
		for i := range a {
			a[i] = randomValue(rng, keys, depth+1)
		}
		return a
	default:
		return randomObject(rng, keys, depth)
	}
}

func TestValidateConcurrent(t *testing.T) {
	t.Parallel()
	r := newTestRegistry(t)
	done := make(chan error)
	for i := range 8 {
		go func() {
			var err error
			for j := range 200 {
				args := fmt.Sprintf(`{"path":"p%d","limit":%d,"tags":["a",%d]}`, i, j%3, j)
				if e := r.Validate("read", json.RawMessage(args)); e == nil {
					err = fmt.Errorf("Validate(%s) = nil, want an error", args)
				}
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
