package hooks

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/mx-claw/mx-claw/internal/patch"
)

// maxSnapshot bounds a file read for a hook's tool_response
// (originalFile, structuredPatch); larger files are reported without.
const maxSnapshot = 1 << 20

// Snapshot is what the files a call writes held before it ran, taken by
// [Runner.Snapshot] for the tool_response of the call's PostToolUse
// hooks (Write's "create" or "update", Edit's originalFile and
// structuredPatch). The zero value knows nothing.
type Snapshot struct {
	files map[string]fileState
}

// fileState is one file before a call.
type fileState struct {
	exists  bool
	content string
	known   bool // content was read (the file exists and is small enough)
}

// before returns the state of file before the call and whether the
// snapshot has it.
func (s *Snapshot) before(file string) (fileState, bool) {
	if s == nil {
		return fileState{}, false
	}
	f, ok := s.files[file]
	return f, ok
}

// takeSnapshot reads the files the views write.
func takeSnapshot(vs []view) *Snapshot {
	s := &Snapshot{files: map[string]fileState{}}
	for _, v := range vs {
		if v.file == "" || v.name == "Read" {
			continue
		}
		var st fileState
		if fi, err := os.Stat(v.file); err == nil && fi.Mode().IsRegular() {
			st.exists = true
			st.content, st.known = readSmall(v.file)
		}
		s.files[v.file] = st
	}
	return s
}

// readSmall returns the content of a regular file of at most maxSnapshot
// bytes.
func readSmall(path string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxSnapshot {
		return "", false
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSnapshot+1))
	if err != nil || len(data) > maxSnapshot {
		return "", false
	}
	return string(data), true
}

// bashTrailer is the last line run_command adds to a command's output.
var bashTrailer = regexp.MustCompile(`(?:^|\n)\[(?:exit code (-?\d+), [0-9.]+s|command timed out after [^\]]* and was killed)\]\n?$`)

// splitBash splits run_command's result into the command's output and
// whether it was interrupted (timed out).
func splitBash(result string) (stdout string, interrupted bool) {
	loc := bashTrailer.FindStringSubmatchIndex(result)
	if loc == nil {
		return result, false
	}
	trailer := result[loc[0]:]
	return strings.TrimSuffix(result[:loc[0]], "\n"), strings.Contains(trailer, "timed out")
}

// response returns tool_response for view v of a call that ran, in
// Claude Code's shape for the tool, with mx-claw's own "content" (the
// result the model got) and "isError" beside it.
func (e *Event) response(v view) map[string]any {
	r := map[string]any{"content": e.ToolResult, "isError": e.ToolFailed}
	str := func(k string) string { s, _ := v.input[k].(string); return s }
	switch v.name {
	case "Bash":
		out, interrupted := splitBash(e.ToolResult)
		r["stdout"], r["stderr"], r["interrupted"], r["isImage"] = out, "", interrupted || e.Interrupted, false
	case "Read":
		start := 1
		if n, ok := v.input["offset"].(float64); ok && n >= 1 {
			start = int(n)
		}
		lines := strings.Count(e.ToolResult, "\n")
		r["type"] = "text"
		r["file"] = map[string]any{"filePath": v.file, "content": e.ToolResult, "numLines": lines,
			"startLine": start, "totalLines": lines}
	case "Write":
		r["filePath"], r["content"] = v.file, str("content")
		before, known := e.Before.before(v.file)
		r["type"] = "create"
		r["originalFile"] = nil
		r["structuredPatch"] = []any{}
		switch {
		case v.kind == "delete":
			r["type"] = "delete"
		case known && before.exists:
			r["type"] = "update"
			if before.known {
				r["originalFile"] = before.content
				r["structuredPatch"] = structuredPatch(before.content, str("content"))
			}
		}
		// Claude Code's own "content" is the file's: mx-claw's result
		// text stays under "result".
		r["result"] = e.ToolResult
	case "Edit", "MultiEdit":
		r["filePath"] = v.file
		r["userModified"] = false
		r["originalFile"] = nil
		r["structuredPatch"] = []any{}
		if before, ok := e.Before.before(v.file); ok && before.known {
			r["originalFile"] = before.content
			if after, ok := readSmall(v.file); ok {
				r["structuredPatch"] = structuredPatch(before.content, after)
			}
		}
		if v.name == "Edit" {
			r["oldString"], r["newString"] = str("old_string"), str("new_string")
			r["replaceAll"], _ = v.input["replace_all"].(bool)
		} else {
			r["edits"] = v.input["edits"]
		}
	case "Glob":
		var names []string
		for _, l := range strings.Split(e.ToolResult, "\n") {
			if l != "" && !strings.HasPrefix(l, "[") && !strings.HasPrefix(l, "No files") {
				if !filepath.IsAbs(l) && e.Cwd != "" {
					l = filepath.Join(e.Cwd, l)
				}
				names = append(names, l)
			}
		}
		r["filenames"], r["numFiles"], r["truncated"], r["durationMs"] = names, len(names), strings.Contains(e.ToolResult, "\n[…"), 0
	case "Grep":
		r["mode"], r["numLines"] = "content", strings.Count(e.ToolResult, "\n")
	case "TodoWrite":
		r["oldTodos"], r["newTodos"] = []any{}, v.input["todos"]
	}
	return r
}

// structuredPatch returns the change from old to new as Claude Code's
// structuredPatch: hunks with oldStart, oldLines, newStart, newLines and
// their prefixed lines.
func structuredPatch(old, new string) []any {
	out := []any{}
	text := patch.Unified("a", "b", old, new, 3)
	var cur map[string]any
	var lines []string
	flush := func() {
		if cur != nil {
			cur["lines"] = lines
			out = append(out, cur)
		}
	}
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "@@ "):
			flush()
			cur, lines = hunkHeader(l), []string{}
		case cur == nil || l == "":
		default:
			lines = append(lines, l)
		}
	}
	flush()
	return out
}

// hunkHeaderRE reads "@@ -a,b +c,d @@".
var hunkHeaderRE = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// hunkHeader turns a unified hunk header into a structuredPatch hunk.
func hunkHeader(l string) map[string]any {
	m := hunkHeaderRE.FindStringSubmatch(l)
	n := func(s string, def int) int {
		if s == "" {
			return def
		}
		v, _ := strconv.Atoi(s)
		return v
	}
	if m == nil {
		return map[string]any{}
	}
	return map[string]any{"oldStart": n(m[1], 0), "oldLines": n(m[2], 1), "newStart": n(m[3], 0), "newLines": n(m[4], 1)}
}
