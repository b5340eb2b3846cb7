package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// fakeTool is a Tool with a given name and schema that does nothing.
type fakeTool struct {
	name   string
	schema string
}

func (f fakeTool) Info() Info {
	return Info{Name: f.name, Description: "a test tool", Schema: json.RawMessage(f.schema), Risk: RiskRead, ConcurrencySafe: true}
}
func (f fakeTool) Summary(json.RawMessage) string { return f.name }
func (f fakeTool) Run(context.Context, *Env, json.RawMessage) (Result, error) {
	return Result{}, nil
}

const readSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string"},
    "limit": {"type": "integer", "minimum": 1},
    "mode": {"enum": ["a", "b"]},
    "tags": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["path"],
  "additionalProperties": false
}`

func newTestRegistry(t *testing.T) *Registry {
	t.Helper()
	r, err := NewRegistry(
		fakeTool{name: "read", schema: readSchema},
		fakeTool{name: "open", schema: `{"type":"object"}`},
	)
	if err != nil {
		t.Fatalf("NewRegistry: %v", err)
	}
	return r
}

func TestValidate(t *testing.T) {
	t.Parallel()
	r := newTestRegistry(t)
	tests := []struct {
		name    string
		tool    string
		args    string
		want    string // exact error message; "" for no error
		prefix  bool   // want is only a prefix
		unknown bool
	}{
		{name: "valid", tool: "read", args: `{"path":"a.go","limit":10}`},
		{name: "integer as float", tool: "read", args: `{"path":"a.go","limit":10.0}`},
		{name: "empty args no required", tool: "open", args: ``},
		{name: "blank args no required", tool: "open", args: " \n\t"},
		{name: "extra property allowed", tool: "open", args: `{"anything":1}`},
		{
			name: "empty args missing required", tool: "read", args: ``,
			want: "invalid arguments: missing property 'path'",
		},
		{
			name: "missing required", tool: "read", args: `{"limit":5}`,
			want: "invalid arguments: missing property 'path'",
		},
		{
			name: "wrong type", tool: "read", args: `{"path":"a","limit":"10"}`,
			want: "invalid arguments: at '/limit': got string, want integer",
		},
		{
			name: "all problems at once", tool: "read", args: `{"limit":"x","mode":"c","tags":["ok",3]}`,
			want: "invalid arguments: missing property 'path'; at '/limit': got string, want integer; " +
				"at '/mode': value must be one of 'a', 'b'; at '/tags/1': got number, want string",
		},
		{
			name: "minimum", tool: "read", args: `{"path":"a","limit":0}`,
			want: "invalid arguments: at '/limit': minimum: got 0, want 1",
		},
		{
			name: "fractional integer", tool: "read", args: `{"path":"a","limit":1.5}`,
			want: "invalid arguments: at '/limit': got number, want integer",
		},
		{
			name: "extra property forbidden", tool: "read", args: `{"path":"a","file":"b"}`,
			want: "invalid arguments: additional properties 'file' not allowed (known properties: limit, mode, path, tags)",
		},
		{
			name: "not an object", tool: "read", args: `["a"]`,
			want: "invalid arguments: got array, want object",
		},
		{
			name: "null", tool: "read", args: `null`,
			want: "invalid arguments: got null, want object",
		},
		{
			name: "invalid JSON", tool: "read", args: `{"path": "a"`,
			want: "invalid JSON arguments: ", prefix: true,
		},
		{
			name: "invalid JSON syntax offset", tool: "read", args: `{"path": 'a'}`,
			want: "invalid JSON arguments: invalid character '\\'' looking for beginning of value (at byte 10)",
		},
		{
			name: "trailing data", tool: "read", args: `{"path":"a"} {}`,
			want: "invalid JSON arguments: invalid character '{' after top-level value (at byte 14)",
		},
		{
			name: "number out of range", tool: "read", args: `{"path":"a","limit":1e400}`,
			want: "invalid JSON arguments: json: cannot unmarshal number 1e400 into Go value of type float64",
		},
		{name: "unknown tool", tool: "nope", args: `{}`, want: `unknown tool "nope"`, unknown: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := r.Validate(tt.tool, json.RawMessage(tt.args))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate(%s) = %v, want nil", tt.args, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate(%s) = nil, want %q", tt.args, tt.want)
			}
			got := err.Error()
			if tt.prefix && !strings.HasPrefix(got, tt.want) || !tt.prefix && got != tt.want {
				t.Errorf("Validate(%s)\n got: %s\nwant: %s", tt.args, got, tt.want)
			}
			if tt.unknown {
				if !errors.Is(err, ErrUnknownTool) {
					t.Errorf("error %v does not match ErrUnknownTool", err)
				}
				return
			}
			var ae *ArgumentError
			if !errors.As(err, &ae) || ae.Tool != tt.tool {
				t.Errorf("error %#v is not an *ArgumentError for %s", err, tt.tool)
			}
		})
	}
}

func TestNewRegistryErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		tools []Tool
		want  string
	}{
		{
			name:  "duplicate name",
			tools: []Tool{fakeTool{"a", `{"type":"object"}`}, fakeTool{"a", `{"type":"object"}`}},
			want:  "already registered",
		},
		{name: "empty name", tools: []Tool{fakeTool{"", `{"type":"object"}`}}, want: "empty tool name"},
		{name: "bad name", tools: []Tool{fakeTool{"read file", `{"type":"object"}`}}, want: "may only hold"},
		{name: "long name", tools: []Tool{fakeTool{strings.Repeat("a", 65), `{"type":"object"}`}}, want: "longer than"},
		{name: "nil tool", tools: []Tool{nil}, want: "nil"},
		{name: "schema not JSON", tools: []Tool{fakeTool{"a", `{`}}, want: "parse schema"},
		{name: "schema not object", tools: []Tool{fakeTool{"a", `true`}}, want: "want an object"},
		{name: "schema not of object", tools: []Tool{fakeTool{"a", `{"type":"string"}`}}, want: `"type": "object"`},
		{
			name:  "invalid schema",
			tools: []Tool{fakeTool{"a", `{"type":"object","properties":{"x":{"type":"nope"}}}`}},
			want:  "compile schema",
		},
		{
			name:  "external ref refused",
			tools: []Tool{fakeTool{"a", `{"type":"object","properties":{"x":{"$ref":"file:///etc/passwd"}}}`}},
			want:  "external references are not supported",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewRegistry(tt.tools...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("NewRegistry() error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestRegistryLookupAndOrder(t *testing.T) {
	t.Parallel()
	names := []string{"zeta", "alpha", "mcp__srv__tool", "beta-2"}
	var ts []Tool
	for _, n := range names {
		ts = append(ts, fakeTool{n, `{"type":"object"}`})
	}
	r, err := NewRegistry(ts...)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		got := r.Tools()
		if len(got) != len(names) {
			t.Fatalf("Tools() has %d tools, want %d", len(got), len(names))
		}
		for i, tool := range got {
			if tool.Info().Name != names[i] {
				t.Errorf("Tools()[%d] = %s, want %s", i, tool.Info().Name, names[i])
			}
		}
		got[0] = nil // must not affect the registry
	}
	if tool, ok := r.Lookup("alpha"); !ok || tool.Info().Name != "alpha" {
		t.Errorf("Lookup(alpha) = %v, %v", tool, ok)
	}
	if _, ok := r.Lookup("gamma"); ok {
		t.Error("Lookup(gamma) found a tool")
	}
}

func BenchmarkValidate(b *testing.B) {
	r, err := NewRegistry(fakeTool{name: "read", schema: readSchema})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("valid", func(b *testing.B) {
		args := json.RawMessage(`{"path":"internal/tools/registry.go","limit":200,"tags":["a","b"]}`)
		b.ReportAllocs()
		for b.Loop() {
			if err := r.Validate("read", args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("invalid", func(b *testing.B) {
		args := json.RawMessage(`{"limit":"x","mode":"c","tags":["ok",3]}`)
		b.ReportAllocs()
		for b.Loop() {
			if err := r.Validate("read", args); err == nil {
				b.Fatal("Validate accepted invalid arguments")
			}
		}
	})
}

func BenchmarkNewRegistry(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewRegistry(fakeTool{name: "read", schema: readSchema}); err != nil {
			b.Fatal(err)
		}
	}
}
