package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/mx-claw/mx-claw/internal/checkpoint"
	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// CheckpointsDir is the directory of the checkpoint stores inside the home
// directory.
const CheckpointsDir = "checkpoints"

// checkpointGrace is how old an unreferenced blob must be before garbage
// collection removes it: a snapshot running meanwhile in another process
// keeps what it just saved.
const checkpointGrace = time.Hour

func newCheckpoints(home string, log *slog.Logger) *checkpoint.Manager {
	return checkpoint.NewManager(filepath.Join(home, CheckpointsDir), checkpoint.Limits{}, log)
}

// DeleteSessions deletes sessions (refusing any in use), with the command
// outputs kept for them, and then removes the checkpoint blobs no
// remaining session of their workspaces refers to. It returns the ids deleted; the error joins the refusals.
func (a *App) DeleteSessions(ctx context.Context, ids []string) ([]string, error) {
	var deleted []string
	var errs []error
	workspaces := map[string]bool{}
	for _, id := range ids {
		s, err := a.Store.GetSession(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			errs = append(errs, fmt.Errorf("session %s does not exist", id))
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := a.Store.DeleteSession(ctx, id); err != nil {
			var held *store.LeaseHeldError
			if errors.As(err, &held) {
				err = fmt.Errorf("session %s is in use (a turn runs on it in %s); not deleted", id, held.Owner)
			}
			errs = append(errs, err)
			continue
		}
		deleted = append(deleted, id)
		a.removeOutputs(id)
		workspaces[s.Workspace] = true
	}
	for ws := range workspaces {
		if err := a.collectCheckpoints(ctx, ws); err != nil {
			a.logger().Warn("checkpoint garbage collection", "workspace", ws, "err", err)
		}
	}
	return deleted, errors.Join(errs...)
}

// collectCheckpoints removes the blobs of a workspace's checkpoint store
// that no file change of its sessions refers to. A workspace with a
// session in use is left for later.
func (a *App) collectCheckpoints(ctx context.Context, workspace string) error {
	list, err := a.Store.ListSessions(ctx, store.ListOptions{Workspace: workspace})
	if err != nil {
		return err
	}
	for _, s := range list {
		if l, err := a.Store.GetLease(ctx, s.ID); err == nil && l.ExpiresAt.After(time.Now()) {
			return nil
		}
	}
	ws, err := tools.NewWorkspace(workspace)
	if err != nil {
		return nil // the workspace is gone; its store stays until removed by hand
	}
	cs, err := a.Checkpoints.For(ws.Root())
	if err != nil {
		return err
	}
	keep, err := a.Store.CheckpointObjects(ctx, workspace)
	if err != nil {
		return err
	}
	_, err = cs.GC(keep, checkpointGrace)
	return err
}

func (a *App) logger() *slog.Logger {
	if a.opts.Logger != nil {
		return a.opts.Logger
	}
	return slog.New(slog.DiscardHandler)
}
