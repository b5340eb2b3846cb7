package server

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// InfoFileName is the file in the mx-claw home that tells local programs
// where the running server is and its token.
const InfoFileName = "server.json"

// WriteInfo writes info to home/server.json with mode 0600, atomically (a
// temporary file of mode 0600 renamed over it), so the token is never
// readable by others, not even for a moment.
func WriteInfo(home string, info protocol.ServerInfo) error {
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(home, ".server-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(home, InfoFileName))
}

// RemoveInfo removes home/server.json if it is still the one of process
// pid (another server may have started on the same home since).
func RemoveInfo(home string, pid int) error {
	path := filepath.Join(home, InfoFileName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var info protocol.ServerInfo
	if json.Unmarshal(data, &info) == nil && info.PID != pid {
		return nil
	}
	return os.Remove(path)
}
