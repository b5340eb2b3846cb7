package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// AddDir adds a directory beside the workspace to the sessions of this
// process (--add-dir, the REPL's /add-dir): their tools may use it with
// the same boundary checks and protected paths as the workspace. It
// returns the directory's canonical path; a path that is not a directory
// is an error.
func (a *App) AddDir(dir string) (string, error) {
	d, err := canonicalDir(dir, "")
	if err != nil {
		return "", err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !slices.Contains(a.addDirs, d) {
		a.addDirs = append(a.addDirs, d)
	}
	return d, nil
}

// AddedDirs returns the directories added to this process's sessions.
func (a *App) AddedDirs() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.addDirs)
}

// roots returns the additional directories of a session's turn: the
// user's permissions.additionalDirectories, the project's once it is
// trusted (relative ones against the workspace), and those added to this
// process. A directory of the settings that does not exist is left out
// with a warning in the log.
func (a *App) roots(ctx context.Context, sess *protocol.Session) ([]string, error) {
	trusted, err := a.Trusted(ctx, sess.Workspace)
	if err != nil {
		return nil, err
	}
	user, project, err := a.settings(sess.Workspace, trusted)
	if err != nil {
		return nil, err
	}
	var out []string
	from := []*permission.Settings{user}
	if trusted {
		from = append(from, project)
	}
	for _, s := range from {
		if s == nil {
			continue
		}
		for _, d := range s.AdditionalDirectories {
			c, err := canonicalDir(d, sess.Workspace)
			if err != nil {
				a.log().Warn("additional directory left out", "settings", s.Path, "dir", d, "err", err)
				continue
			}
			out = append(out, c)
		}
	}
	return append(out, a.AddedDirs()...), nil
}

// canonicalDir makes dir absolute (~/ against the user's home, a relative
// path against base, else the current directory) and symlink-free, and
// checks that it is a directory.
func canonicalDir(dir, base string) (string, error) {
	d := strings.TrimSpace(dir)
	switch {
	case d == "":
		return "", fmt.Errorf("empty directory")
	case d == "~" || strings.HasPrefix(d, "~/"):
		home := UserHome()
		if home == "" {
			return "", fmt.Errorf("%s: the home directory is unknown", dir)
		}
		d = filepath.Join(home, d[1:])
	case !filepath.IsAbs(d) && base != "":
		d = filepath.Join(base, d)
	}
	abs, err := filepath.Abs(d)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("directory %s does not exist", abs)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", abs)
	}
	return real, nil
}

// AddDir adds a directory to the sessions of this process (/add-dir); a
// relative path is taken against the workspace.
func (b *Backend) AddDir(dir string) (string, error) {
	if d := strings.TrimSpace(dir); d != "" && !filepath.IsAbs(d) && d != "~" && !strings.HasPrefix(d, "~/") {
		dir = filepath.Join(b.ws, d)
	}
	return b.a.AddDir(dir)
}

// AddedDirs lists the directories added to this process's sessions.
func (b *Backend) AddedDirs() []string { return b.a.AddedDirs() }
