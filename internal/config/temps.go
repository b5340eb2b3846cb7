package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
)

// tempPattern is the os.CreateTemp pattern of a config save: the pid in the
// name tells CleanStaleTemps whose save it is.
func tempPattern() string { return ".config-pid" + strconv.Itoa(os.Getpid()) + "-*.json" }

var pidTemp = regexp.MustCompile(`^\.config-pid([0-9]+)-[0-9]+\.json$`)

// legacyTempAge is how old a temporary file without a pid in its name must
// be to count as left behind: a save takes milliseconds.
const legacyTempAge = time.Minute

// CleanStaleTemps removes the temporary files of config saves in dir that
// a process left behind when it was killed mid-save (or whose removal
// failed): those of processes that are gone (alive reports false), and
// those without a pid in their name older than a minute. It returns the
// files it removed.
func CleanStaleTemps(dir string, alive func(pid int) bool) []string {
	matches, _ := filepath.Glob(filepath.Join(dir, ".config-*.json"))
	var removed []string
	for _, p := range matches {
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		stale := time.Since(fi.ModTime()) > legacyTempAge
		if m := pidTemp.FindStringSubmatch(filepath.Base(p)); m != nil {
			pid, _ := strconv.Atoi(m[1])
			stale = pid != os.Getpid() && !alive(pid)
		}
		if stale && os.Remove(p) == nil {
			removed = append(removed, p)
		}
	}
	return removed
}
