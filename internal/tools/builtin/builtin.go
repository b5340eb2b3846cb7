// Package builtin holds mx-claw's built-in tools: one file per tool, each
// with its description for the model in an embedded Markdown file of the
// same name. Tools reach files only through the [tools.Workspace] in the
// Env they are given, so the workspace boundary is enforced in one place.
//
// The file tools' cases are txtar fixtures, one call each, in
// testdata/fixtures (its README gives the format), run by TestFixtures
// with golang.org/x/tools/txtar, the format's reference parser.
//
// Only the agent's wiring (app) and tests import this package; the agent
// itself sees tools only through the tools package.
package builtin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"

	"github.com/mx-claw/mx-claw/internal/tools"
)

// All returns the built-in tools in the order they are offered to the
// model: read_file, list_dir, glob, grep, write_file, edit_file,
// apply_patch, todo_write.
func All() []tools.Tool {
	return []tools.Tool{
		newReadFile(),
		newListDir(),
		newGlob(),
		newGrep(),
		newWriteFile(),
		newEditFile(),
		newApplyPatch(),
		newTodoWrite(),
	}
}

// workspace returns env's workspace or an error.
func workspace(env *tools.Env) (*tools.Workspace, error) {
	if env == nil || env.Workspace == nil {
		return nil, errNoWorkspace
	}
	return env.Workspace, nil
}

// decodeArgs decodes validated arguments into v; empty text counts as {}.
func decodeArgs(args json.RawMessage, v any) error {
	text := bytes.TrimSpace(args)
	if len(text) == 0 {
		text = []byte("{}")
	}
	if err := json.Unmarshal(text, v); err != nil {
		return fmt.Errorf("decode arguments: %w", err)
	}
	return nil
}

// jsonInt is an integer argument. JSON schema counts 2.0 as an integer but
// encoding/json will not decode it into an int, so this does. Values past
// math.MaxInt32 are clamped to it: no offset, limit or depth needs more.
type jsonInt int

// UnmarshalJSON decodes a JSON number with no fractional part.
func (n *jsonInt) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || f != math.Trunc(f) {
		return fmt.Errorf("%s is not an integer", b)
	}
	*n = jsonInt(max(min(f, math.MaxInt32), math.MinInt32))
	return nil
}

// displayPath is how a summary shows a path argument before it is
// resolved: cleaned, with forward slashes if relative.
func displayPath(p string) string {
	if p == "" {
		return "."
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.ToSlash(filepath.Clean(p))
}

// humanSize formats a byte count for people and models: "512 B",
// "12.3 KiB", "4.0 MiB".
func humanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// joinDisplay joins a display path (as returned by Workspace.Resolve) and a
// name.
func joinDisplay(rel, name string) string {
	switch {
	case rel == ".":
		return name
	case filepath.IsAbs(rel):
		return filepath.Join(rel, name)
	default:
		return rel + "/" + name
	}
}

// pathOrDot returns an optional path argument, "." (the workspace root)
// when it is absent or empty.
func pathOrDot(p *string) string {
	if p == nil || *p == "" {
		return "."
	}
	return *p
}
