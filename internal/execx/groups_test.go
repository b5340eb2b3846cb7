package execx

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// deadPid returns the pid of a process that has ended.
func deadPid(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

// TestReapKillsGroupsOfDeadOwners: a group recorded by an mx-claw that
// has ended is killed, leader alive or not; a group of a live owner and a
// record whose leader is another process are left alone.
func TestReapKillsGroupsOfDeadOwners(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc: start times unknown, Reap kills nothing")
	}
	dir := t.TempDir()
	g := NewGroups(dir)
	start := func(script string) *exec.Cmd {
		c := exec.Command("bash", "-c", script)
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(-c.Process.Pid, syscall.SIGKILL) })
		return c
	}
	record := func(owner, pgid int, leaderStart string) {
		name := filepath.Join(dir, fmt.Sprintf("%d-%d", owner, pgid))
		os.WriteFile(name, []byte(fmt.Sprintf("%s %s\n", "1", leaderStart)), 0o600)
	}
	orphan := start("sleep 30")
	record(deadPid(t), orphan.Process.Pid, startTime(orphan.Process.Pid))
	// A group whose leader has exited but whose background child lives.
	left := start("sleep 30 & echo $! ; exit 0")
	leaderStart := startTime(left.Process.Pid)
	left.Wait() // the leader is gone for good
	record(deadPid(t), left.Process.Pid, leaderStart)
	mine := start("sleep 30")
	done := g.add(mine.Process.Pid)
	defer done()
	if n := g.Reap(); n != 2 {
		t.Errorf("Reap killed %d groups, want 2", n)
	}
	if err := orphan.Wait(); err == nil {
		t.Error("the orphaned group's leader was not killed")
	}
	deadline := time.Now().Add(3 * time.Second)
	for syscall.Kill(-left.Process.Pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Error("the background child of an ended leader still runs")
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(mine.Process.Pid, 0); err != nil {
		t.Errorf("a group of this live process was killed: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d records left, want only this process's", len(entries))
	}
}
