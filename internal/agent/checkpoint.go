package agent

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mx-claw/mx-claw/internal/checkpoint"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// checkpointRun is a checkpoint taken before a call, waiting for the one
// after it.
type checkpointRun struct {
	store  *checkpoint.Store
	before *checkpoint.Manifest
	paths  []string // nil: the whole workspace
}

// checkpointBefore takes the checkpoint of a call that may change the
// workspace: the paths a file tool names, or the whole workspace for a
// command that is not read-only (the permission classifier says which)
// and for any other tool that may write. It returns nil when the call
// needs none, or when the checkpoint failed (a warning says the call's
// changes cannot be undone).
func (t *turn) checkpointBefore(c *call) *checkpointRun {
	mgr := t.core.opts.Checkpoints
	if mgr == nil || c.tool == nil || c.tool.Info().Risk == tools.RiskRead {
		return nil
	}
	paths, whole := t.touches(c)
	if !whole && len(paths) == 0 {
		return nil
	}
	store, err := mgr.For(t.ws.Root())
	var before *checkpoint.Manifest
	if err == nil {
		if whole {
			before, err = store.Snapshot(t.ctx)
		} else {
			before, err = store.SnapshotPaths(t.ctx, paths)
		}
	}
	if err != nil {
		if t.ctx.Err() == nil {
			t.emit(protocol.Event{Type: protocol.EventWarning, ToolCallID: c.ID, Step: t.step,
				Text: fmt.Sprintf("no checkpoint before %s (%v): its changes cannot be undone", c.summary, err)})
		}
		return nil
	}
	return &checkpointRun{store: store, before: before, paths: paths}
}

// warmCheckpoints starts the first whole-workspace checkpoint of the
// workspace at root in the background, if this process has not taken one
// (checkpoint.Store.WarmUp): the first command that is not read-only then
// waits only for what is left of it, and a turn that only reads waits for
// nothing.
func (c *Core) warmCheckpoints(root string) {
	if c.opts.Checkpoints == nil {
		return
	}
	if st, err := c.opts.Checkpoints.For(root); err == nil {
		st.WarmUp()
	}
}

// checkpointAfter takes the checkpoint after the call and returns what the
// call changed. It runs even when the turn was cancelled meanwhile: what a
// stopped command did is recorded too.
func (t *turn) checkpointAfter(cp *checkpointRun) []protocol.FileChange {
	if cp == nil {
		return nil
	}
	var after *checkpoint.Manifest
	var err error
	if cp.paths == nil {
		after, err = cp.store.Snapshot(t.bg)
	} else {
		after, err = cp.store.SnapshotPaths(t.bg, cp.paths)
	}
	if err != nil {
		t.emit(protocol.Event{Type: protocol.EventWarning, Step: t.step,
			Text: fmt.Sprintf("no checkpoint after the call (%v): its changes cannot be undone", err)})
		return nil
	}
	return checkpoint.Diff(cp.before, after)
}

// touches returns the workspace paths (relative, slash-separated) a call
// may change, or whole when it may change anything: a command that is not
// read-only, or a tool that may write and names no paths.
func (t *turn) touches(c *call) (paths []string, whole bool) {
	if c.Name == permission.CommandTool {
		var a struct {
			Command string `json:"command"`
			Workdir string `json:"workdir"`
		}
		if json.Unmarshal(c.args, &a) != nil {
			return nil, true
		}
		if readOnlyCommand(a.Command, permission.Env{Workspace: t.ws.Root(), Workdir: a.Workdir, Home: t.core.opts.Home}) {
			return nil, false
		}
		return nil, true
	}
	raw, err := permission.ArgPaths(c.Name, c.args)
	if err != nil || len(raw) == 0 {
		return nil, true
	}
	for _, p := range raw {
		abs, rel, err := t.ws.Resolve(p)
		if err != nil || rel == abs {
			continue // outside the workspace: the tool refuses it, or it is an allowed directory's
		}
		paths = append(paths, rel)
	}
	return paths, false
}

// readOnlyCommand reports whether the permission classifier finds every
// part of command read-only (and none it cannot judge).
func readOnlyCommand(command string, env permission.Env) bool {
	parts := permission.ClassifyCommand(command, env)
	if len(parts) == 0 {
		return true
	}
	for _, p := range parts {
		if !p.ReadOnly || p.Unresolved || p.Catastrophic {
			return false
		}
	}
	return true
}

// ErrNoCheckpoints is returned by Undo and Rewind when the core keeps no
// checkpoints.
var ErrNoCheckpoints = errors.New("checkpoints are off")
