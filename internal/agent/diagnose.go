package agent

import (
	"context"
	"path/filepath"
	"slices"

	"github.com/mx-claw/mx-claw/internal/permission"
)

// DiagnoseFunc checks with language servers the files (absolute paths) a
// call of a file-editing tool is about to change, in the workspace root of
// session sessionID. It is called before the call runs and returns the
// function to call after it, which returns what to add to the call's
// result — the errors the change brought — or "". It may return nil when
// there is nothing to check.
type DiagnoseFunc func(ctx context.Context, sessionID, root string, files []string) (after func(ctx context.Context) string)

// editTools are the tools whose changes are checked with Diagnose.
var editTools = []string{"edit_file", "write_file", "apply_patch"}

// diagnose starts the language-server check of call c, if it edits files;
// the returned function (nil if there is none) gives the note to add to
// its result.
func (t *turn) diagnose(c *call) func(context.Context) string {
	d := t.core.opts.Diagnose
	if d == nil || !slices.Contains(editTools, c.Name) {
		return nil
	}
	paths, err := permission.ArgPaths(c.Name, c.args)
	if err != nil || len(paths) == 0 {
		return nil
	}
	var files []string
	for _, p := range paths {
		abs, _, err := t.ws.Resolve(p)
		if err != nil {
			continue // outside the workspace: the tool refuses it
		}
		if !slices.Contains(files, abs) {
			files = append(files, filepath.Clean(abs))
		}
	}
	if len(files) == 0 {
		return nil
	}
	return d(t.ctx, t.sess.ID, t.ws.Root(), files)
}
