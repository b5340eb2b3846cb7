//go:build !unix

package secret

import (
	"fmt"
	"os"
)

// lockFile only makes sure the lock file exists: without flock, writers
// in two processes at once can lose an update (the file itself is still
// replaced atomically, so it is never corrupt).
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
