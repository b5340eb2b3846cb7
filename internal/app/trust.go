package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mx-claw/mx-claw/internal/safefile"
)

// Trust is bound to the folder that was trusted, not only to its path: a
// repository deleted and another one cloned at the same path later must
// not inherit the trust (its settings could allow anything and its hooks
// run anything). TrustIdentity names a folder by its device and inode and,
// in a git repository, by a random token mx-claw keeps in the git
// directory, which a new clone does not have and no repository can ship.

// TrustMarkerName is the file in a repository's git directory that holds
// the token binding trust to that clone.
const TrustMarkerName = "mx-claw-trust"

// TrustIdentity describes the folder at path as trust binds to it. With
// create set (trusting now) it writes the repository's token if there is
// none yet; without, a repository that has none gets an identity that
// matches no trust recorded with one.
func TrustIdentity(path string, create bool) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("identity of %s: %w", path, err)
	}
	id := "folder:" + fileID(fi)
	gitDir := gitDirOf(path)
	if gitDir == "" {
		return id, nil
	}
	token, err := readTrustToken(gitDir)
	if err != nil {
		return "", err
	}
	if token == "" && create {
		if token, err = writeTrustToken(gitDir); err != nil {
			return "", err
		}
	}
	return id + ";git:" + token, nil
}

// gitDirOf returns the git directory of the repository whose work tree is
// dir: dir/.git, or where a .git file ("gitdir: …", worktrees and
// submodules) points; "" if dir is not such a work tree.
func gitDirOf(dir string) string {
	p := filepath.Join(dir, ".git")
	fi, err := os.Lstat(p)
	switch {
	case err != nil:
		return ""
	case fi.IsDir():
		return p
	case !fi.Mode().IsRegular():
		return ""
	}
	data, err := safefile.ReadFile(p, 4<<10)
	if err != nil {
		return ""
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return ""
	}
	g := strings.TrimSpace(rest)
	if !filepath.IsAbs(g) {
		g = filepath.Join(dir, g)
	}
	if fi, err := os.Stat(g); err != nil || !fi.IsDir() {
		return ""
	}
	return g
}

// readTrustToken reads the token of a git directory, "" if it has none.
func readTrustToken(gitDir string) (string, error) {
	data, err := safefile.ReadFile(filepath.Join(gitDir, TrustMarkerName), 1<<10)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read trust marker: %w", err)
	}
	return string(bytes.TrimSpace(data)), nil
}

// writeTrustToken gives a git directory a new random token.
func writeTrustToken(gitDir string) (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	token := hex.EncodeToString(b)
	if err := os.WriteFile(filepath.Join(gitDir, TrustMarkerName), []byte(token+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write trust marker: %w", err)
	}
	return token, nil
}

// Trusted reports whether the workspace's own settings and hooks may apply:
// the user trusted this very folder before (see TrustIdentity), or trusts
// it now with --trust (which is remembered). A trust recorded for the path
// but another folder, or before identities were kept, does not count; the
// logger says so.
func (a *App) Trusted(ctx context.Context, workspace string) (bool, error) {
	if a.opts.Trust {
		id, err := TrustIdentity(workspace, true)
		if err != nil {
			return false, err
		}
		if err := a.Store.SetTrusted(ctx, workspace, id); err != nil {
			return false, err
		}
		return true, nil
	}
	stored, ok, err := a.Store.Trusted(ctx, workspace)
	if err != nil || !ok {
		return false, err
	}
	id, err := TrustIdentity(workspace, false)
	if err != nil {
		return false, err
	}
	if stored == "" || stored != id {
		a.log().Warn("the trust recorded for this path is for another folder (or predates folder identities); "+
			"its settings and hooks are not applied; trust it again with --trust", "workspace", workspace)
		return false, nil
	}
	return true, nil
}
