package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// bwrapNet is how a bwrap sandbox sees the network.
type bwrapNet int

const (
	// bwrapNetOff: a network namespace of its own, with only loopback.
	bwrapNetOff bwrapNet = iota
	// bwrapNetProxy: as off, plus a bridge inside to the proxy's socket.
	bwrapNetProxy
	// bwrapNetOn: the host's network.
	bwrapNetOn
)

// bwrapArgs returns bubblewrap's arguments (without the program name) for
// running argv in dir under plan. The order of the mounts matters: a later
// mount hides what an earlier one put at or below the same path, so the
// read-only root comes first, then the writable roots, then what must stay
// read-only inside them.
func bwrapArgs(plan Plan, net bwrapNet, dir string, argv []string) []string {
	a := []string{
		"--new-session", "--die-with-parent",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
	}
	if net != bwrapNetOn {
		a = append(a, "--unshare-net")
	}
	a = append(a,
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
	)
	for _, w := range plan.Writable {
		a = append(a, "--bind", w, w)
	}
	sensitive := plan.sensitive()
	pinned := plan.pinnedDirs()
	for _, d := range pinned {
		// The directory holding a protected symlink stays read-only (the
		// link cannot be replaced); its other entries stay writable.
		a = append(a, "--ro-bind", d, d)
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			c := filepath.Join(d, e.Name())
			if e.Type()&fs.ModeSymlink != 0 || slices.Contains(sensitive, c) {
				// A symlink is never a bind target: bwrap would follow it
				// and make its target writable.
				continue
			}
			a = append(a, "--bind", c, c)
		}
	}
	for _, r := range plan.ReadOnly {
		a = append(a, "--ro-bind", r, r)
	}
	for _, m := range plan.Masks {
		if slices.Contains(pinned, filepath.Dir(m)) {
			continue // nothing can be created in a read-only directory
		}
		if plan.MaskDirs[m] {
			a = append(a, "--tmpfs", m, "--remount-ro", m)
		} else {
			a = append(a, "--ro-bind", "/dev/null", m)
		}
	}
	if dir != "" {
		a = append(a, "--chdir", dir)
	}
	a = append(a, "--")
	return append(a, argv...)
}
