package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/mx-claw/mx-claw/internal/store"
)

// OutputMaxAge is how long the kept output of a command (for
// read_tool_output) stays under the home's outputs directory: at start,
// files older than this are removed, and so are the directories of
// sessions that no longer exist. A session's outputs also go when the
// session is deleted (DeleteSessions).
const OutputMaxAge = 30 * 24 * time.Hour

// removeOutputs removes the command outputs kept for a deleted session.
func (a *App) removeOutputs(id string) {
	if id == "" || id == "." || id == ".." || filepath.Base(id) != id {
		return
	}
	if err := os.RemoveAll(filepath.Join(a.Home, OutputDirName, id)); err != nil {
		a.logger().Warn("remove the outputs of a deleted session", "session", id, "err", err)
	}
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
