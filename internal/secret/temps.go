package secret

import (
	"os"
	"path/filepath"
)

// CleanStaleTemps removes the temporary files of secrets-file writes in dir
// (.secrets-*.tmp, the key's included) that a process left behind when it
// was killed mid-write. It takes the writers' lock first, so no write is
// under way while it removes them. It returns the files it removed.
func CleanStaleTemps(dir string) []string {
	pattern := filepath.Join(dir, ".secrets-*.tmp")
	if m, _ := filepath.Glob(pattern); len(m) == 0 {
		return nil
	}
	unlock, err := lockFile(filepath.Join(dir, LockFileName))
	if err != nil {
		return nil
	}
	defer unlock()
	matches, _ := filepath.Glob(pattern)
	var removed []string
	for _, p := range matches {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && os.Remove(p) == nil {
			removed = append(removed, p)
		}
	}
	return removed
}
