package execx

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Groups records the process groups of running commands, one file each in
// a directory, so that a later mx-claw can kill the groups a killed one
// left behind ([Groups.Reap]). A group's leader dies with mx-claw by
// itself; what it started in the background does not, and a sandbox
// without a pid namespace cannot catch it either.
type Groups struct {
	dir string
}

// NewGroups returns a record kept in dir (created when needed).
func NewGroups(dir string) *Groups { return &Groups{dir: dir} }

// add records the group pgid of this process and returns the function
// that forgets it. A record that cannot be written is skipped: it only
// serves the cleanup after a crash.
func (g *Groups) add(pgid int) func() {
	if err := os.MkdirAll(g.dir, 0o700); err != nil {
		return func() {}
	}
	self := os.Getpid()
	name := filepath.Join(g.dir, fmt.Sprintf("%d-%d", self, pgid))
	data := fmt.Sprintf("%s %s\n", startTime(self), startTime(pgid))
	if err := os.WriteFile(name, []byte(data), 0o600); err != nil {
		return func() {}
	}
	return func() { os.Remove(name) }
}

// Reap kills the process groups recorded by mx-claw processes that have
// ended, and forgets them. A group is killed only if its leader is the
// process that was recorded (same start time), so a reused pid is never
// hit. It returns how many groups it killed.
func (g *Groups) Reap() int {
	entries, err := os.ReadDir(g.dir)
	if err != nil {
		return 0
	}
	killed := 0
	for _, e := range entries {
		owner, pgid, ok := parseGroupName(e.Name())
		if !ok {
			continue
		}
		path := filepath.Join(g.dir, e.Name())
		data, _ := os.ReadFile(path)
		f := strings.Fields(string(data))
		if len(f) != 2 {
			os.Remove(path)
			continue
		}
		if owner == os.Getpid() || alive(owner, f[0]) {
			continue
		}
		switch {
		case f[1] == "-":
		case startTime(pgid) == f[1]:
			if syscall.Kill(-pgid, syscall.SIGKILL) == nil {
				killed++
			}
		default:
			// The leader is gone (it dies with mx-claw); what it left in
			// its group is killed one by one.
			if killMembers(pgid, f[1]) > 0 {
				killed++
			}
		}
		os.Remove(path)
	}
	return killed
}

func parseGroupName(name string) (owner, pgid int, ok bool) {
	a, b, found := strings.Cut(name, "-")
	if !found {
		return 0, 0, false
	}
	o, err1 := strconv.Atoi(a)
	p, err2 := strconv.Atoi(b)
	return o, p, err1 == nil && err2 == nil && o > 0 && p > 1
}

// alive reports whether pid runs and, where start times are known, is the
// process that started at start.
func alive(pid int, start string) bool {
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return false
	}
	if st := startTime(pid); start != "-" && st != "-" && st != start {
		return false
	}
	return true
}

// killMembers kills the processes of group pgid whose leader (started at
// leaderStart) is gone: those that started after it and are not
// themselves the leader of a group of that id (a new process that got the
// number after the whole group ended). It returns how many it killed.
func killMembers(pgid int, leaderStart string) int {
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
		f := statFields(pid)
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

// statFields returns the fields of /proc/PID/stat after the command name
// (state, ppid, pgrp, …), or nil.
func statFields(pid int) []string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(data)[i+1:])
}

// startTime is a process's start time (in clock ticks since boot, from
// /proc), or "-" where unknown.
func startTime(pid int) string {
	// The command name (field 2) may hold spaces; fields after it do not.
	f := statFields(pid)
	if len(f) < 20 {
		return "-"
	}
	return f[19] // field 22, starttime
}
