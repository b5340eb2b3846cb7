package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mx-claw/mx-claw/internal/store"
)

// OutputMaxAge is how long the kept output of a command (for
// read_tool_output) stays under the home's outputs directory: at start,
// files older than this are removed, and so are the directories of
// sessions that no longer exist. A session's outputs also go when the
// session is removed (RemoveSession).
const OutputMaxAge = 30 * 24 * time.Hour

// RemoveSession removes a stored session, with the command outputs kept
// for it under home. It fails with *store.LeaseHeldError while a turn
// runs on the session, and with an error wrapping store.ErrNotFound if
// there is no such session.
func RemoveSession(ctx context.Context, st store.Store, home, id string) error {
	dir, err := outputDir(home, id)
	if err != nil {
		return err
	}
	if err := st.DeleteSession(ctx, id, store.NewOwner()); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove the outputs of session %s: %w", id, err)
	}
	return nil
}

// outputDir returns the directory of a session's kept outputs.
func outputDir(home, id string) (string, error) {
	if id == "" || id == "." || id == ".." || filepath.Base(id) != id {
		return "", fmt.Errorf("session id %q: %w", id, store.ErrNotFound)
	}
	return filepath.Join(home, OutputDirName, id), nil
}

// pruneOutputs removes, under the home's outputs directory, the files
// older than maxAge (by modification time) and the directories of
// sessions the store does not have, and returns what it removed. A
// directory left empty goes too.
func pruneOutputs(ctx context.Context, st store.Store, home string, maxAge time.Duration, now time.Time) []string {
	root := filepath.Join(home, OutputDirName)
	dirs, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var removed []string
	for _, d := range dirs {
		path := filepath.Join(root, d.Name())
		if !d.IsDir() {
			continue
		}
		if _, err := st.GetSession(ctx, d.Name()); errors.Is(err, store.ErrNotFound) {
			if os.RemoveAll(path) == nil {
				removed = append(removed, path)
			}
			continue
		}
		files, err := os.ReadDir(path)
		if err != nil {
			continue
		}
		left := len(files)
		for _, f := range files {
			info, err := f.Info()
			if err != nil || !info.Mode().IsRegular() || now.Sub(info.ModTime()) < maxAge {
				continue
			}
			p := filepath.Join(path, f.Name())
			if os.Remove(p) == nil {
				removed = append(removed, p)
				left--
			}
		}
		if left == 0 {
			os.Remove(path)
		}
	}
	return removed
}
