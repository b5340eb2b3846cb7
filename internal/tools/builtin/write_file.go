package builtin

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/mx-claw/mx-claw/internal/tools"
)

//go:embed write_file.md
var writeFileDescription string

const writeFileSchema = `{
  "type": "object",
  "properties": {
    "path": {
      "type": "string",
      "description": "The file to write, relative to the workspace root (or absolute inside it)."
    },
    "content": {
      "type": "string",
      "description": "The complete content of the file."
    }
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`

// newFileMode is the mode of files write_file creates (less the umask).
const newFileMode = 0o644

// writeFile is the write_file tool.
type writeFile struct{}

func newWriteFile() *writeFile { return &writeFile{} }

type writeFileArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// writeFileInfo is what write_file is to the agent; Info returns it, shared.
var writeFileInfo = tools.Info{Name: "write_file", Description: writeFileDescription, Schema: json.RawMessage(writeFileSchema),
	Risk: tools.RiskWrite, ConcurrencySafe: false}

func (*writeFile) Info() tools.Info { return writeFileInfo }
func (*writeFile) Summary(args json.RawMessage) string {
	var a writeFileArgs
	if decodeArgs(args, &a) != nil {
		return "Write file"
	}
	return fmt.Sprintf("Write %s (%d bytes)", displayPath(a.Path), len(a.Content))
}

func (*writeFile) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	ws, err := workspace(env)
	if err != nil {
		return tools.Result{}, err
	}
	var a writeFileArgs
	if err := decodeArgs(args, &a); err != nil {
		return tools.Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return tools.Result{}, err
	}
	abs, rel, err := ws.ResolveForWrite(a.Path)
	if err != nil {
		return tools.Result{}, err
	}
	// An existing file must pass the read-before-write guard, and its old
	// content is kept for the diff. Anything else (a new file, a
	// directory) is left to WriteFileAtomic to create or refuse.
	var old []byte
	exists := false
	if fi, err := ws.Stat(abs); err == nil && fi.Mode().IsRegular() {
		var fromEditor bool
		if old, fromEditor, err = tools.ReadText(ctx, env, ws, abs); err != nil {
			return tools.Result{}, err
		}
		exists = true
		if fromEditor {
			fi = nil
		}
		if env.Files != nil {
			if err := env.Files.Check(abs, fi, old); err != nil {
				return tools.Result{}, err
			}
		}
	}
	data := []byte(a.Content)
	created, viaEditor, err := tools.WriteText(ctx, env, ws, abs, data, newFileMode)
	if err != nil {
		return tools.Result{}, err
	}
	recordWrite(env, ws, abs, data, viaEditor)
	how := "overwritten"
	if created {
		how = "created"
	}
	msg := fmt.Sprintf("Wrote %d bytes to %s (%s)", len(a.Content), rel, how)
	if exists && !created {
		msg += "\n\n" + changeDiff(rel, string(old), a.Content)
	}
	return tools.Result{Content: msg}, nil
}
