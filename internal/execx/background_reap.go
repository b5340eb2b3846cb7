package execx

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// recordGroup records that this process runs the process group pgid, in
// dir, and returns the function that forgets it. A record that cannot be
// written is skipped: it only serves the cleanup after a crash.
func recordGroup(dir string, pgid int) func() {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return func() {}
	}
	self := os.Getpid()
	name := filepath.Join(dir, fmt.Sprintf("%d-%d", self, pgid))
	data := fmt.Sprintf("%s %s\n", jobStartTime(self), jobStartTime(pgid))
	if err := os.WriteFile(name, []byte(data), 0o600); err != nil {
		return func() {}
	}
	return func() { _ = os.Remove(name) }
}

// ReapJobs kills the background process groups recorded in dir by mx-claw
// processes that have ended (killed before they could stop them), and
// forgets them. A group is killed only while its leader is the process
// that was recorded (same start time), so a reused pid is never hit; when
// the leader is gone, the members of its group that started after it are
// killed one by one. It returns how many groups it killed.
func ReapJobs(dir string) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	killed := 0
	for _, e := range entries {
		a, b, ok := strings.Cut(e.Name(), "-")
		owner, err1 := strconv.Atoi(a)
		pgid, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || owner <= 0 || pgid <= 1 {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, _ := os.ReadFile(path)
		f := strings.Fields(string(data))
		if len(f) != 2 {
			_ = os.Remove(path)
			continue
		}
		if owner == os.Getpid() || jobProcAlive(owner, f[0]) {
			continue
		}
		switch st := jobStartTime(pgid); {
		case f[1] == "-" || st == f[1]:
			// Without /proc the leader cannot be told from a stranger
			// that got its pid; a group of that id is taken as the one
			// recorded.
			if syscall.Kill(-pgid, syscall.SIGKILL) == nil {
				killed++
			}
		default:
			if jobKillMembers(pgid, f[1]) > 0 {
				killed++
			}
		}
		_ = os.Remove(path)
	}
	return killed
}

// jobProcAlive reports whether pid runs and, where start times are known,
// is the process that started at start.
func jobProcAlive(pid int, start string) bool {
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return false
	}
	if st := jobStartTime(pid); start != "-" && st != "-" && st != start {
		return false
	}
	return true
}

// jobKillMembers kills the processes of group pgid, whose leader (started
// at leaderStart) is gone, that started after it.
func jobKillMembers(pgid int, leaderStart string) int {
	start, err := strconv.ParseUint(leaderStart, 10, 64)
	if err != nil {
		return 0
	}
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == pgid {
			continue
		}
		f := jobProcStat(pid)
		if len(f) < 20 || f[2] != strconv.Itoa(pgid) {
			continue
		}
		if st, err := strconv.ParseUint(f[19], 10, 64); err == nil && st >= start {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				n++
			}
		}
	}
	return n
}

// jobProcStat returns the fields of /proc/PID/stat after the command name
// (state, ppid, pgrp, …), or nil where /proc is not there.
func jobProcStat(pid int) []string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// jobStartTime is a process's start time in clock ticks since boot, or
// "-" where unknown.
func jobStartTime(pid int) string {
	f := jobProcStat(pid)
	if len(f) < 20 {
		return "-"
	}
	return f[19]
}
