package builtin

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// The tools' schemas are written by hand (they carry descriptions, bounds
// and enums for the model) and their arguments are decoded into structs:
// the two must agree, or a property the model is told about is silently
// dropped, or a field is never filled. argStructs names each tool's
// argument struct; a tool without one fails the test.
var argStructs = map[string]reflect.Type{
	"read_file":        reflect.TypeFor[readFileArgs](),
	"list_dir":         reflect.TypeFor[listDirArgs](),
	"glob":             reflect.TypeFor[globArgs](),
	"grep":             reflect.TypeFor[grepArgs](),
	"write_file":       reflect.TypeFor[writeFileArgs](),
	"edit_file":        reflect.TypeFor[editFileArgs](),
	"apply_patch":      reflect.TypeFor[applyPatchArgs](),
	"todo_write":       reflect.TypeFor[todoWriteArgs](),
	"run_command":      reflect.TypeFor[runCommandArgs](),
	"read_tool_output": reflect.TypeFor[readToolOutputArgs](),
	"search_history":   reflect.TypeFor[searchHistoryArgs](),
	"process_output":   reflect.TypeFor[processArgs](),
	"process_kill":     reflect.TypeFor[processKillArgs](),
	"web_fetch":        reflect.TypeFor[webFetchArgs](),
	"web_search":       reflect.TypeFor[webSearchArgs](),
}

// everyTool is every built-in tool.
func everyTool() []tools.Tool {
	return append(All(), NewRunCommand(), NewReadToolOutput(), NewSearchHistory(), NewProcessOutput(), NewProcessKill(),
		NewWebFetch(nil), NewWebSearch(nil))
}

// jsonFields returns the JSON names of a struct's fields.
func jsonFields(typ reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		out[name] = f
	}
	return out
}

// schemaTypes are the JSON Schema types a Go kind decodes.
func schemaTypes(typ reflect.Type) []string {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch typ.Kind() {
	case reflect.String:
		return []string{"string"}
	case reflect.Bool:
		return []string{"boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return []string{"integer"}
	case reflect.Float32, reflect.Float64:
		return []string{"number", "integer"}
	case reflect.Slice, reflect.Array:
		return []string{"array"}
	case reflect.Struct, reflect.Map:
		return []string{"object"}
	}
	return nil
}

// agree returns every way the object schema s and the struct typ differ,
// each prefixed with at: properties without a field and fields without a
// property, types that do not decode into each other, required
// properties that do not exist, extra properties not refused; nested
// objects and array items alike.
func agree(at string, s map[string]any, typ reflect.Type) []string {
	for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
		typ = typ.Elem()
	}
	var out []string
	props, _ := s["properties"].(map[string]any)
	fields := jsonFields(typ)
	for name := range props {
		if _, ok := fields[name]; !ok {
			out = append(out, fmt.Sprintf("%s: property %q has no field in %s", at, name, typ))
		}
	}
	for name := range fields {
		if _, ok := props[name]; !ok {
			out = append(out, fmt.Sprintf("%s: field %q of %s is not in the schema", at, name, typ))
		}
	}
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			if _, ok := props[r.(string)]; !ok {
				out = append(out, fmt.Sprintf("%s: required property %q does not exist", at, r))
			}
		}
	}
	if s["additionalProperties"] != false {
		out = append(out, at+": additionalProperties is not false, so a misspelt argument would pass unseen")
	}
	for name, p := range props {
		f, ok := fields[name]
		if !ok {
			continue
		}
		ps, _ := p.(map[string]any)
		typName, _ := ps["type"].(string)
		if want := schemaTypes(f.Type); !slices.Contains(want, typName) {
			out = append(out, fmt.Sprintf("%s.%s: schema type %q, but the field is %s", at, name, typName, f.Type))
			continue
		}
		switch typName {
		case "object":
			out = append(out, agree(at+"."+name, ps, f.Type)...)
		case "array":
			if items, ok := ps["items"].(map[string]any); ok && items["type"] == "object" {
				out = append(out, agree(at+"."+name+"[]", items, f.Type)...)
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestSchemasAgreeWithArgStructs(t *testing.T) {
	t.Parallel()
	for _, tool := range everyTool() {
		info := tool.Info()
		typ, ok := argStructs[info.Name]
		if !ok {
			t.Errorf("%s: no argument struct in argStructs", info.Name)
			continue
		}
		var s map[string]any
		if err := json.Unmarshal(info.Schema, &s); err != nil {
			t.Fatalf("%s: %v", info.Name, err)
		}
		for _, p := range agree(info.Name, s, typ) {
			t.Error(p)
		}
	}
}

// todo_write's status enum is protocol's TodoStatus, value for value.
func TestTodoStatusEnum(t *testing.T) {
	t.Parallel()
	var s struct {
		Properties struct {
			Todos struct {
				Items struct {
					Properties struct {
						Status struct {
							Enum []protocol.TodoStatus `json:"enum"`
						} `json:"status"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"todos"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(todoWriteInfo.Schema, &s); err != nil {
		t.Fatal(err)
	}
	want := []protocol.TodoStatus{protocol.TodoPending, protocol.TodoInProgress, protocol.TodoCompleted}
	if got := s.Properties.Todos.Items.Properties.Status.Enum; !slices.Equal(got, want) {
		t.Errorf("todo_write status enum %v, want %v", got, want)
	}
}

// renamedField returns a copy of the struct type typ whose field's JSON
// name is name.
func renamedField(typ reflect.Type, field, name string) reflect.Type {
	fields := make([]reflect.StructField, typ.NumField())
	for i := range fields {
		f := typ.Field(i)
		if f.Name == field {
			f.Tag = reflect.StructTag(`json:"` + name + `"`)
		}
		fields[i] = f
	}
	return reflect.StructOf(fields)
}

// The agreement check fails on deliberately broken copies: a renamed tag,
// a field of the wrong type, a nested struct out of step.
func TestSchemaAgreementCatchesDrift(t *testing.T) {
	t.Parallel()
	schemaOf := func(info tools.Info) map[string]any {
		var s map[string]any
		if err := json.Unmarshal(info.Schema, &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	todo := reflect.TypeFor[protocol.Todo]()
	tests := []struct {
		info tools.Info
		typ  reflect.Type
		want []string
	}{
		{readFileInfo, renamedField(reflect.TypeFor[readFileArgs](), "Path", "file_path"),
			[]string{`property "path" has no field`, `field "file_path" of`}},
		{runCommandInfo, reflect.StructOf([]reflect.StructField{
			{Name: "Command", Type: reflect.TypeFor[string](), Tag: `json:"command"`},
			{Name: "Workdir", Type: reflect.TypeFor[string](), Tag: `json:"workdir"`},
			{Name: "Timeout", Type: reflect.TypeFor[string](), Tag: `json:"timeout"`},
			{Name: "Escalate", Type: reflect.TypeFor[bool](), Tag: `json:"escalate"`},
			{Name: "Justification", Type: reflect.TypeFor[string](), Tag: `json:"justification"`},
		}), []string{`run_command.timeout: schema type "integer", but the field is string`}},
		{todoWriteInfo, reflect.StructOf([]reflect.StructField{
			{Name: "Todos", Type: reflect.SliceOf(renamedField(todo, "Content", "text")), Tag: `json:"todos"`},
		}), []string{`todo_write.todos[]: property "content" has no field`}},
	}
	for _, tt := range tests {
		got := strings.Join(agree(tt.info.Name, schemaOf(tt.info), tt.typ), "\n")
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: problems\n%s\nwant one with %q", tt.info.Name, got, w)
			}
		}
	}
}
