package sandbox

import (
	"os"
	"path/filepath"
	"slices"
)

// grant is one path a Landlock sandbox may write: a directory (and
// everything below it) or a single file.
type grant struct {
	Path string `json:"p"`
	Dir  bool   `json:"d,omitempty"`
}

// maxGrants bounds the rules of one Landlock ruleset; a workspace that
// would need more is refused rather than half-protected.
const maxGrants = 4096

// landlockGrants turns a plan into write grants. Landlock can only allow,
// so a directory that is, or holds, something that must stay read-only is
// not granted itself: its entries are, one by one, except the read-only
// ones (and except symlinks, which Landlock would resolve to their
// targets). The directory itself then accepts no new entries — which is
// also what keeps an absent protected path from being created.
func landlockGrants(plan Plan) ([]grant, bool) {
	sensitive := plan.sensitive()
	holds := func(d string) bool {
		for _, s := range sensitive {
			if within(d, s) {
				return true
			}
		}
		// A masked path's parent must not accept new entries.
		for _, m := range plan.Masks {
			if filepath.Dir(m) == d {
				return true
			}
		}
		return false
	}
	var out []grant
	var walk func(p string, isDir bool) bool
	walk = func(p string, isDir bool) bool {
		if len(out) > maxGrants {
			return false
		}
		if slices.Contains(sensitive, p) {
			return true
		}
		if !isDir || !holds(p) {
			out = append(out, grant{Path: p, Dir: isDir})
			return true
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return true // unreadable: not granted, so read-only
		}
		for _, e := range entries {
			if !e.IsDir() && !e.Type().IsRegular() {
				continue // symlinks, sockets, devices: left as they are
			}
			if !walk(filepath.Join(p, e.Name()), e.IsDir()) {
				return false
			}
		}
		return true
	}
	for _, w := range plan.Writable {
		if !walk(w, true) {
			return nil, false
		}
	}
	return out, true
}
