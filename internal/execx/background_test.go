package execx

import (
	"context"
	"errors"
	"os"
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
		if f := statFields(pid); len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
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
	js := &Jobs{Groups: NewGroups(t.TempDir())}
	defer js.Close()
	j, err := js.Start(nil, Command{Script: "echo starting; sleep 0.3; echo 'listening on :8080'; sleep 0.2; (sleep 60 &); sleep 60", Dir: t.TempDir()}, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if j.ID != "bg1" || j.PID <= 0 {
		t.Fatalf("job %+v", j)
	}
	if _, err := os.Stat(filepath.Join(js.Groups.dir, strconv.Itoa(os.Getpid())+"-"+strconv.Itoa(j.PID))); err != nil {
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
	if entries, _ := os.ReadDir(js.Groups.dir); len(entries) != 0 {
		t.Errorf("records left: %v", entries)
	}
	if l := js.List(); len(l) != 1 || l[0].ID != "bg1" || l[0].Running {
		t.Errorf("List = %+v", l)
	}
}

func TestJobsEndedProcess(t *testing.T) {
	t.Parallel()
	js := &Jobs{}
	j, err := js.Start(nil, Command{Script: "echo done; exit 3", Dir: t.TempDir()}, "s")
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
	j, err := js.Start(nil, Command{Script: "head -c 1000 /dev/zero | tr '\\0' x; echo; echo END; sleep 60", Dir: t.TempDir()}, "s")
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
		j, err := js.Start(nil, Command{Script: "trap '' TERM; sleep 60 & sleep 60", Dir: t.TempDir()}, "s")
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, j.PID)
	}
	js.Close()
	for _, p := range pids {
		waitGone(t, p)
	}
	if _, err := js.Start(nil, Command{Script: "true"}, "s"); err == nil {
		t.Error("a job started after Close")
	}
}
