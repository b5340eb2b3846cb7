package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// pidsCgroup is a cgroup whose pids.max caps a command's processes. It is
// how the process limit holds for root, whom RLIMIT_NPROC does not bind.
type pidsCgroup struct {
	dir string
}

var cgroupSeq atomic.Int64

// pidsCgroupBase returns the cgroup directory of this process in a
// hierarchy with the pids controller where children can be created, or
// "" if there is none.
func pidsCgroupBase() string {
	if os.Getuid() != 0 {
		return ""
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	var v1, v2 string
	sc := bufio.NewScanner(strings.NewReader(string(mounts)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := -1
		for i, x := range f {
			if x == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+3 >= len(f) || len(f) < 5 {
			continue
		}
		fstype, super := f[sep+1], f[sep+3]
		switch {
		case fstype == "cgroup" && hasOpt(super, "pids"):
			v1 = f[4]
		case fstype == "cgroup2" && v2 == "":
			v2 = f[4]
		}
	}
	for _, line := range strings.Split(string(own), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if v1 != "" && hasOpt(parts[1], "pids") {
			return writableDir(filepath.Join(v1, parts[2]))
		}
	}
	for _, line := range strings.Split(string(own), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok && v2 != "" {
			dir := filepath.Join(v2, rest)
			ctl, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
			if hasOpt(strings.ReplaceAll(strings.TrimSpace(string(ctl)), " ", ","), "pids") {
				return writableDir(dir)
			}
		}
	}
	return ""
}

func hasOpt(list, opt string) bool {
	for _, o := range strings.Split(list, ",") {
		if o == opt {
			return true
		}
	}
	return false
}

func writableDir(d string) string {
	if syscall.Access(d, 2 /* W_OK */) != nil {
		return ""
	}
	return d
}

// newPidsCgroup creates a cgroup below base allowing max processes.
func newPidsCgroup(base string, max int64) (*pidsCgroup, error) {
	dir := filepath.Join(base, fmt.Sprintf("mx-claw-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.FormatInt(max, 10)), 0o644); err != nil {
		os.Remove(dir)
		return nil, err
	}
	return &pidsCgroup{dir: dir}, nil
}

// add moves pid into the cgroup.
func (c *pidsCgroup) add(pid int) error {
	return os.WriteFile(filepath.Join(c.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
}

// remove kills whatever is left in the cgroup and removes it.
func (c *pidsCgroup) remove() {
	removeCgroup(c.dir)
}

func removeCgroup(dir string) {
	deadline := time.Now().Add(3 * time.Second)
	for {
		data, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		err := os.Remove(dir)
		if err == nil || errors.Is(err, os.ErrNotExist) || time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// removeStaleCgroups removes the cgroups of mx-claw processes that are
// gone (killed before they could clean up), killing what they left.
func removeStaleCgroups(base string) {
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "mx-claw-")
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		removeCgroup(filepath.Join(base, e.Name()))
	}
}
