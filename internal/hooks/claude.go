package hooks

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mx-claw/mx-claw/internal/patch"
)

// A hook sees a tool call as Claude Code would have made it: Claude Code's
// tool name and field names, with mx-claw's own fields beside them where
// they differ, so that scripts written for either work. This file is that
// translation, both ways.

// claudeNames maps mx-claw's tool names to Claude Code's.
var claudeNames = map[string]string{
	"run_command": "Bash",
	"read_file":   "Read",
	"write_file":  "Write",
	"edit_file":   "Edit",
	"glob":        "Glob",
	"grep":        "Grep",
	"list_dir":    "LS",
	"todo_write":  "TodoWrite",
	"web_fetch":   "WebFetch",
	"web_search":  "WebSearch",
}

// ClaudeName returns Claude Code's name for the mx-claw tool name, or
// name itself when Claude Code has no such tool. apply_patch has none: a
// hook sees it as the Write, Edit and MultiEdit calls it amounts to.
func ClaudeName(name string) string {
	if c, ok := claudeNames[name]; ok {
		return c
	}
	return name
}

// toolNames returns the names a matcher may use for the mx-claw tool name:
// the name itself and Claude Code's names for the same tool.
func toolNames(name string) []string {
	switch name {
	case "edit_file":
		return []string{name, "Edit", "MultiEdit"}
	case "apply_patch":
		return []string{name, "Write", "Edit", "MultiEdit"}
	}
	if c, ok := claudeNames[name]; ok {
		return []string{name, c}
	}
	return []string{name}
}

// view is one tool call as a hook sees it.
type view struct {
	// name is the tool name in the hook's input: Claude Code's.
	name string
	// input is tool_input: Claude Code's fields, mx-claw's beside them.
	input map[string]any
	// file is the absolute path of the file the call reads or writes, or
	// "".
	file string
	// kind is what an apply_patch view does to file: "add", "update",
	// "delete" or "move" (the destination of a move); "" otherwise.
	kind string
	// edits are an apply_patch update's changes, for the response.
	edits []edit
}

// edit is one old → new replacement of an Edit or MultiEdit.
type edit struct{ old, new string }

// names returns what a matcher is matched against for v of an mx-claw
// tool: v's name and the mx-claw tool's own names.
func (v view) names(tool string) []string {
	names := toolNames(tool)
	if !slices.Contains(names, v.name) {
		names = append(names, v.name)
	}
	return names
}

// views returns the calls a hook sees for a call of the mx-claw tool with
// arguments args, in a workspace rooted at cwd: one, except for an
// apply_patch that changes several files, which is one per file.
func views(cwd, tool string, args json.RawMessage) []view {
	var in map[string]any
	if json.Unmarshal(args, &in) != nil || in == nil {
		in = map[string]any{}
	}
	str := func(k string) string { s, _ := in[k].(string); return s }
	abs := func(p string) string {
		if p == "" {
			return ""
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		return filepath.Clean(p)
	}
	v := view{name: ClaudeName(tool), input: in}
	switch tool {
	case "run_command":
		// Claude Code's Bash timeout is in milliseconds, mx-claw's in
		// seconds; the hook sees Claude Code's.
		if secs, ok := in["timeout"].(float64); ok {
			in["timeout"] = secs * 1000
		}
	case "read_file", "write_file", "edit_file":
		v.file = abs(str("path"))
		in["file_path"] = v.file
	case "glob", "grep", "list_dir":
		dir := str("path")
		if tool == "list_dir" && dir == "" {
			dir = "."
		}
		if dir != "" {
			in["path"] = abs(dir)
		}
		if tool == "grep" {
			grepFields(in)
		}
	case "apply_patch":
		if vs := patchViews(str("patch"), abs); len(vs) > 0 {
			return vs
		}
	}
	return []view{v}
}

// grepFields adds Claude Code's Grep fields to mx-claw's grep arguments.
func grepFields(in map[string]any) {
	for mx, cc := range map[string]string{"include": "glob", "case_insensitive": "-i", "context": "-C", "max_results": "head_limit"} {
		if v, ok := in[mx]; ok {
			in[cc] = v
		}
	}
	in["output_mode"] = "content"
}

// patchViews returns one view per file an apply_patch text touches: an
// added file is a Write, a changed one an Edit (one hunk) or a MultiEdit
// (several), a deleted one a Write of nothing, a moved one an Edit of the
// old path and a Write of the new one. Each file is seen once. A patch
// that does not parse gives none (the tool refuses it; nothing changes).
func patchViews(text string, abs func(string) string) []view {
	p, err := patch.Parse(text)
	if err != nil {
		return nil
	}
	var out []view
	at := map[string]int{} // file → index in out
	add := func(v view) {
		if i, ok := at[v.file]; ok {
			// A second operation on the same file: one view holds both.
			prev := &out[i]
			prev.edits = append(prev.edits, v.edits...)
			if v.kind == "add" || v.kind == "move" {
				prev.input["content"] = v.input["content"]
			}
			prev.finish()
			return
		}
		at[v.file] = len(out)
		v.finish()
		out = append(out, v)
	}
	for _, op := range p.Ops {
		file := abs(op.Path)
		base := map[string]any{"file_path": file, "path": op.Path}
		switch op.Kind {
		case patch.Add:
			base["content"] = op.Content()
			add(view{name: "Write", input: base, file: file, kind: "add"})
		case patch.Delete:
			base["content"] = ""
			add(view{name: "Write", input: base, file: file, kind: "delete"})
		case patch.Update:
			v := view{input: base, file: file, kind: "update"}
			for _, h := range op.Hunks {
				v.edits = append(v.edits, edit{old: strings.Join(h.Old(), "\n"), new: strings.Join(h.New(), "\n")})
			}
			if op.MoveTo != "" {
				base["move_to"] = abs(op.MoveTo)
			}
			add(v)
			if op.MoveTo != "" {
				dest := abs(op.MoveTo)
				in := map[string]any{"file_path": dest, "path": op.MoveTo, "content": movedContent(file, op.Hunks)}
				add(view{name: "Write", input: in, file: dest, kind: "move"})
			}
		}
	}
	return out
}

// finish sets the name and the edit fields of an apply_patch view from its
// edits: one edit is an Edit, several a MultiEdit.
func (v *view) finish() {
	v.input["operation"] = v.kind
	switch {
	case v.kind != "update":
		if v.name == "" {
			v.name = "Write"
		}
	case len(v.edits) == 1:
		v.name = "Edit"
		v.input["old_string"], v.input["new_string"], v.input["replace_all"] = v.edits[0].old, v.edits[0].new, false
	default:
		v.name = "MultiEdit"
		delete(v.input, "old_string")
		delete(v.input, "new_string")
		delete(v.input, "replace_all")
		list := make([]map[string]any, len(v.edits))
		for i, e := range v.edits {
			list[i] = map[string]any{"old_string": e.old, "new_string": e.new, "replace_all": false}
		}
		v.input["edits"] = list
	}
}

// movedContent is what a moved file will hold: the source with the hunks
// applied, or "" if that cannot be worked out (the tool will then fail).
func movedContent(src string, hunks []patch.Hunk) string {
	old, ok := readSmall(src)
	if !ok {
		return ""
	}
	out, err := patch.ApplyToContent(old, hunks)
	if err != nil {
		return ""
	}
	return out
}

// mxFields are, per mx-claw tool, its argument names and the Claude Code
// names a hook may give the same value under.
var mxFields = map[string][][2]string{
	"run_command": {{"command", ""}, {"workdir", ""}, {"timeout", ""}},
	"read_file":   {{"path", "file_path"}, {"offset", ""}, {"limit", ""}},
	"write_file":  {{"path", "file_path"}, {"content", ""}},
	"edit_file":   {{"path", "file_path"}, {"old_string", ""}, {"new_string", ""}, {"replace_all", ""}},
	"glob":        {{"pattern", ""}, {"path", ""}},
	"grep": {{"pattern", ""}, {"path", ""}, {"include", "glob"}, {"context", "-C"},
		{"case_insensitive", "-i"}, {"max_results", "head_limit"}},
	"list_dir":   {{"path", ""}, {"depth", ""}},
	"todo_write": {{"todos", ""}},
}

// fromClaude turns a hook's updatedInput for a call of the mx-claw tool
// back into that tool's arguments: Claude Code's names become mx-claw's
// (a Claude Code name wins, as the hook most likely edited that one),
// fields the tool does not take are dropped, and a Bash timeout in
// milliseconds becomes seconds. ok is false for a tool a hook cannot
// rewrite (apply_patch, which it saw as several calls).
func fromClaude(tool string, updated json.RawMessage) (json.RawMessage, bool) {
	if tool == "apply_patch" {
		return nil, false
	}
	fields, known := mxFields[tool]
	if !known {
		return updated, true
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(updated, &in) != nil || in == nil {
		return nil, false
	}
	out := map[string]json.RawMessage{}
	for _, f := range fields {
		if v, ok := in[f[0]]; ok {
			out[f[0]] = v
		}
		if f[1] != "" {
			if v, ok := in[f[1]]; ok {
				out[f[0]] = v
			}
		}
	}
	if tool == "run_command" {
		if t, ok := out["timeout"]; ok {
			var ms float64
			if json.Unmarshal(t, &ms) == nil {
				secs := max(1, min(600, int((ms+999)/1000)))
				out["timeout"], _ = json.Marshal(secs)
			}
		}
	}
	b, err := json.Marshal(out)
	return b, err == nil
}
