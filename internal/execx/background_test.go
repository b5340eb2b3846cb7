package execx

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// groupAlive reports whether a live process (not a zombie waiting to be
// reaped) is in group pgid.
func groupAlive(pgid int) bool {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return syscall.Kill(-pgid, 0) == nil
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := jobProcStat(pid); len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
			return true
		}
	}
	return false
}

func waitGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for groupAlive(pgid) {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still runs", pgid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestJobsStartReadStop(t *testing.T) {
	t.Parallel()
	js := &Jobs{Dir: t.TempDir()}
	defer js.Close()
	j, err := js.Start(Command{Script: "echo starting; sleep 0.3; echo 'listening on :8080'; sleep 0.2; (sleep 60 &); sleep 60", Dir: t.TempDir()}, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if j.ID != "bg1" || j.PID <= 0 {
		t.Fatalf("job %+v", j)
	}
	if _, err := os.Stat(filepath.Join(js.Dir, strconv.Itoa(os.Getpid())+"-"+strconv.Itoa(j.PID))); err != nil {
		t.Errorf("no record of the group: %v", err)
	}
	r := j.Read(context.Background(), regexp.MustCompile(`listening on`), 5*time.Second)
	if !r.Matched || !strings.Contains(r.Output, "starting\n") || !strings.Contains(r.Output, "listening on :8080") || !r.Info.Running {
		t.Fatalf("read = %+v", r)
	}
	// Nothing new since.
	if r := j.Read(context.Background(), nil, 0); r.Output != "" {
		t.Errorf("second read = %q", r.Output)
	}
	if r := j.Read(context.Background(), regexp.MustCompile("never"), 100*time.Millisecond); !r.TimedOut || r.Matched {
		t.Errorf("wait for a pattern that never comes = %+v", r)
	}
	if _, err := js.Get("other-session", j.ID); !errors.Is(err, ErrNoJob) {
		t.Errorf("another session reads the job: %v", err)
	}
	time.Sleep(300 * time.Millisecond) // let the subshell's sleep start
	if _, err := js.Stop("s1", j.ID); err != nil {
		t.Fatal(err)
	}
	waitGone(t, j.PID)
	if info := j.Info(); info.Running {
		t.Errorf("still running after Stop: %+v", info)
	}
	if entries, _ := os.ReadDir(js.Dir); len(entries) != 0 {
		t.Errorf("records left: %v", entries)
	}
	if l := js.List(); len(l) != 1 || l[0].ID != "bg1" || l[0].Running {
		t.Errorf("List = %+v", l)
	}
}

func TestJobsEndedProcess(t *testing.T) {
	t.Parallel()
	js := &Jobs{}
	j, err := js.Start(Command{Script: "echo done; exit 3", Dir: t.TempDir()}, "s")
	if err != nil {
		t.Fatal(err)
	}
	r := j.Read(context.Background(), regexp.MustCompile("never"), 5*time.Second)
	if r.Info.Running || r.Info.ExitCode != 3 || r.Output != "done\n" || r.Matched || r.TimedOut {
		t.Errorf("read = %+v", r)
	}
}

func TestJobsOutputCap(t *testing.T) {
	t.Parallel()
	js := &Jobs{MaxOutput: 100}
	defer js.Close()
	j, err := js.Start(Command{Script: "head -c 1000 /dev/zero | tr '\\0' x; echo; echo END; sleep 60", Dir: t.TempDir()}, "s")
	if err != nil {
		t.Fatal(err)
	}
	r := j.Read(context.Background(), regexp.MustCompile("END"), 5*time.Second)
	if !r.Matched || len(r.Output) != 100 || r.Dropped != 1005-100 {
		t.Errorf("read: %d bytes, dropped %d, matched %v", len(r.Output), r.Dropped, r.Matched)
	}
}

func TestJobsCloseKillsEverything(t *testing.T) {
	t.Parallel()
	js := &Jobs{}
	var pids []int
	for range 3 {
		j, err := js.Start(Command{Script: "trap '' TERM; sleep 60 & sleep 60", Dir: t.TempDir()}, "s")
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, j.PID)
	}
	js.Close()
	for _, p := range pids {
		waitGone(t, p)
	}
	if _, err := js.Start(Command{Script: "true"}, "s"); err == nil {
		t.Error("a job started after Close")
	}
}

func TestReapJobsOfDeadOwner(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc: start times cannot be checked here")
	}
	dir := t.TempDir()
	// A group whose owner is gone: a process started in its own group,
	// recorded under the pid of a process that has exited.
	cmd := exec.Command("bash", "-c", "sleep 60 & sleep 60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	owner := dead.Process.Pid
	pgid := cmd.Process.Pid
	write := func(owner, pgid int, text string) {
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(owner)+"-"+strconv.Itoa(pgid)), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(owner, pgid, "1 "+jobStartTime(pgid)+"\n")
	// A group of a live owner (this process) is left alone.
	live := exec.Command("sleep", "60")
	live.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { syscall.Kill(-live.Process.Pid, syscall.SIGKILL); live.Wait() }()
	write(os.Getpid(), live.Process.Pid, jobStartTime(os.Getpid())+" "+jobStartTime(live.Process.Pid)+"\n")
	// A record whose pid now belongs to another process is not acted on.
	write(owner, live.Process.Pid, "1 999999999\n")

	if n := ReapJobs(dir); n != 1 {
		t.Errorf("ReapJobs = %d, want 1", n)
	}
	waitGone(t, pgid)
	if !groupAlive(live.Process.Pid) {
		t.Error("the live owner's group was killed")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("records left: %v", entries)
	}
}
