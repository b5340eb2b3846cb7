package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mx-claw/mx-claw/internal/safefile"
)

// Files under $MX_CLAW_HOME/mcp/:
//
//	sessions/<session id>.json  a session's frozen tool list
//	tools/<name>-<hash>.json    a server entry's last tool listing
//	approved.json               the approved project servers (approvals.go)
//
// All are mx-claw's own state, written atomically with mode 0600.

// maxStateFile caps what is read back from one of those files.
const maxStateFile = 16 << 20

// toolList is the content of a frozen list or a listing cache.
type toolList struct {
	Version int        `json:"version"`
	Tools   []ToolSpec `json:"tools"`
}

// stateDir is $MX_CLAW_HOME/mcp.
func stateDir(home string) string { return filepath.Join(home, "mcp") }

// sessionFile is where a session's frozen list is kept. Session ids are
// checked: they name a file.
func sessionFile(home, sessionID string) (string, error) {
	if sessionID == "" || fileSafe(sessionID) != sessionID || sessionID[0] == '.' {
		return "", fmt.Errorf("session id %q cannot name a file", sessionID)
	}
	return filepath.Join(stateDir(home), "sessions", sessionID+".json"), nil
}

// cacheFile is where the last listing of a server entry is kept.
func cacheFile(home string, s *Server) string {
	return filepath.Join(stateDir(home), "tools", fileSafe(s.Name)+"-"+s.Hash()+".json")
}

// readList reads a tool list file; ok is false when there is none.
func readList(path string) (list []ToolSpec, ok bool, err error) {
	data, err := safefile.ReadFile(path, maxStateFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var l toolList
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	if l.Version != 1 {
		return nil, false, fmt.Errorf("%s: unknown version %d", path, l.Version)
	}
	return l.Tools, true, nil
}

// writeList writes a tool list file atomically.
func writeList(path string, list []ToolSpec) error {
	if list == nil {
		list = []ToolSpec{}
	}
	data, err := json.MarshalIndent(toolList{Version: 1, Tools: list}, "", " ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, data)
}

// writeFileAtomic writes data to path through a temporary file and a
// rename, mode 0600, creating the directories (0700).
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// FrozenTools returns the MCP tools frozen into a session (ok false if its
// first turn froze none).
func FrozenTools(home, sessionID string) (list []ToolSpec, ok bool, err error) {
	path, err := sessionFile(home, sessionID)
	if err != nil {
		return nil, false, err
	}
	return readList(path)
}
