package app

import (
	"os"
	"path/filepath"

	"github.com/mx-claw/mx-claw/internal/hooks"
)

// PastedDirName is the directory inside the home where pictures pasted
// from the clipboard into the REPL are kept, one directory per session,
// removed with the session.
const PastedDirName = "pasted"

// pastedImageDir is the directory of a session's pasted pictures.
func (a *App) pastedImageDir(sessionID string) string {
	return filepath.Join(a.Home, PastedDirName, filepath.Base(sessionID))
}

// removePasted removes a deleted session's pasted pictures.
func (a *App) removePasted(sessionID string) {
	if sessionID == "" || sessionID == "." || sessionID == ".." || filepath.Base(sessionID) != sessionID {
		return // never the directory of all sessions
	}
	if err := os.RemoveAll(a.pastedImageDir(sessionID)); err != nil {
		a.logger().Warn("remove pasted images", "session", sessionID, "err", err)
	}
}

// PastedImageDir is where the REPL keeps the pictures pasted from the
// clipboard into a session's messages (the directory may not exist yet);
// deleting the session removes them.
func (b *Backend) PastedImageDir(sessionID string) string { return b.a.pastedImageDir(sessionID) }

// removeHookFiles removes the files a deleted session's hooks were given:
// the copy of its transcript and its CLAUDE_ENV_FILE.
func (a *App) removeHookFiles(sessionID string) {
	dir := (&hooks.Runner{DataDir: a.hookDataDir()}).SessionDir(sessionID)
	if dir == "" || filepath.Dir(dir) != a.hookDataDir() {
		return // never the directory of all sessions
	}
	if err := os.RemoveAll(dir); err != nil {
		a.logger().Warn("remove the session's hook files", "session", sessionID, "err", err)
	}
}
