package execx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/mx-claw/mx-claw/internal/sandbox"
)

// DefaultMaxJobOutput is how much of a background process's latest
// output a Jobs keeps.
const DefaultMaxJobOutput = 1 << 20

// killGrace is how long a stopped process group has between SIGTERM and
// SIGKILL.
const killGrace = 2 * time.Second

// ErrNoJob is matched by the error for a background process id that is
// not known (or belongs to another session).
var ErrNoJob = errors.New("no such background process")

// Jobs runs the background processes of one mx-claw process: long-running
// commands (a dev server, a watcher) that run on after the call that
// started them. Each runs in its own process group, with its output kept
// (the latest DefaultMaxJobOutput bytes) for the model to read, and the
// group is killed when the process it started ends, when it is stopped,
// and when mx-claw closes the Jobs.
//
// A job runs through the Runner it is started with: in the session's
// sandbox, and with its group recorded in the runner's Groups (or the
// Jobs' own), so that a later mx-claw kills the groups of one that was
// killed before it could (Groups.Reap). The group's leader dies with
// mx-claw; what it started is stopped by Close or, after a crash, by that
// reap.
//
// Jobs is safe for concurrent use. Its zero value keeps no records.
type Jobs struct {
	// Groups records the jobs' process groups when their Runner has no
	// Groups of its own; nil records nothing.
	Groups *Groups
	// MaxOutput caps the output kept per process; DefaultMaxJobOutput if
	// zero.
	MaxOutput int

	mu     sync.Mutex
	seq    int
	jobs   map[string]*Job
	closed bool
}

// Job is one background process.
type Job struct {
	// ID names the job to the model ("bg1", "bg2", …).
	ID string
	// SessionID is the session that started it; only that session's
	// calls may read or stop it.
	SessionID string
	// Command is the shell command, Dir where it runs.
	Command, Dir string
	// PID is the process's id, which is also its process group's.
	PID     int
	Started time.Time

	out    jobOutput
	done   chan struct{} // closed when the process has ended
	exit   int           // its exit status, once done
	forget func()        // removes its record
}

// JobInfo describes a background process for lists (/ps).
type JobInfo struct {
	ID, SessionID, Command, Dir string
	PID                         int
	Started                     time.Time
	Running                     bool
	// ExitCode is the exit status of a process that ended (-1 if killed
	// by a signal it did not handle).
	ExitCode int
}

// Start starts c.Script with `bash -c` in the background for a session,
// through rn (its sandbox; nil runs it unconfined), and returns at once.
// c.Timeout, c.MaxOutput, c.Output and c.Spill are not used: the process
// runs until it ends or is stopped.
func (js *Jobs) Start(rn *Runner, c Command, sessionID string) (*Job, error) {
	js.mu.Lock()
	if js.closed {
		js.mu.Unlock()
		return nil, errors.New("mx-claw is shutting down; no process can be started")
	}
	js.seq++
	id := "bg" + strconv.Itoa(js.seq)
	js.mu.Unlock()

	env := c.Env
	if env == nil {
		env = []string{}
	}
	argv := []string{"bash", "-c", c.Script}
	cmd := exec.Command(argv[0], argv[1:]...)
	var launch *sandbox.Launch
	if rn != nil && rn.Sandbox != nil {
		l, err := rn.Sandbox.Prepare(sandbox.Command{Argv: argv, Dir: c.Dir, Env: env})
		if err != nil {
			return nil, err
		}
		launch = l
		cmd = &exec.Cmd{Path: l.Path, Args: l.Args, ExtraFiles: l.ExtraFiles}
		env = l.Env
	}
	cmd.Dir = c.Dir
	cmd.Env = env
	cmd.SysProcAttr = groupAttr()
	r, w, err := os.Pipe()
	if err != nil {
		if launch != nil {
			launch.Done()
		}
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		if launch != nil {
			launch.Done()
		}
		return nil, fmt.Errorf("start %s: %w", filepath.Base(cmd.Path), err)
	}
	w.Close()
	j := &Job{ID: id, SessionID: sessionID, Command: c.Script, Dir: c.Dir, PID: cmd.Process.Pid,
		Started: time.Now(), done: make(chan struct{}), forget: func() {}}
	j.out.init(cmp(js.MaxOutput, DefaultMaxJobOutput))
	groups := js.Groups
	if rn != nil && rn.Groups != nil {
		groups = rn.Groups
	}
	if groups != nil {
		j.forget = groups.add(j.PID)
	}
	if launch != nil {
		if err := launch.Started(j.PID); err != nil {
			_ = syscall.Kill(-j.PID, syscall.SIGKILL)
			cmd.Wait()
			r.Close()
			j.forget()
			launch.Done()
			return nil, err
		}
	}
	js.mu.Lock()
	if js.jobs == nil {
		js.jobs = make(map[string]*Job)
	}
	js.jobs[id] = j
	closed := js.closed
	js.mu.Unlock()

	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				j.out.write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		err := cmd.Wait()
		// What the leader left in its group goes with it, as with a
		// command run in the foreground.
		_ = syscall.Kill(-j.PID, syscall.SIGKILL)
		select {
		case <-readDone:
		case <-time.After(2 * time.Second):
		}
		r.Close()
		j.exit = exitCode(err)
		j.forget()
		if launch != nil {
			launch.Done()
		}
		close(j.done)
		j.out.wake()
	}()
	if closed {
		// Closed while starting: it must not outlive the Jobs.
		j.stop(0)
	}
	return j, nil
}

// Get returns the job id of a session.
func (js *Jobs) Get(sessionID, id string) (*Job, error) {
	js.mu.Lock()
	defer js.mu.Unlock()
	j, ok := js.jobs[id]
	if !ok || j.SessionID != sessionID {
		return nil, fmt.Errorf("%w: %q", ErrNoJob, id)
	}
	return j, nil
}

// List describes the jobs (of every session), running or ended, in the
// order they started.
func (js *Jobs) List() []JobInfo {
	js.mu.Lock()
	jobs := make([]*Job, 0, len(js.jobs))
	for _, j := range js.jobs {
		jobs = append(jobs, j)
	}
	js.mu.Unlock()
	slices.SortFunc(jobs, func(a, b *Job) int { return a.Started.Compare(b.Started) })
	out := make([]JobInfo, len(jobs))
	for i, j := range jobs {
		out[i] = j.Info()
	}
	return out
}

// Stop stops a job (its whole process group: SIGTERM, then SIGKILL after
// a grace period) and waits until it has ended. Stopping a job that ended
// is not an error.
func (js *Jobs) Stop(sessionID, id string) (*Job, error) {
	j, err := js.Get(sessionID, id)
	if err != nil {
		return nil, err
	}
	j.stop(killGrace)
	return j, nil
}

// Close stops every job (SIGTERM, then SIGKILL after a short grace) and
// waits for them; no job can be started afterwards. mx-claw calls it when
// it exits.
func (js *Jobs) Close() {
	if js == nil {
		return
	}
	js.mu.Lock()
	js.closed = true
	jobs := make([]*Job, 0, len(js.jobs))
	for _, j := range js.jobs {
		jobs = append(jobs, j)
	}
	js.mu.Unlock()
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() { j.stop(500 * time.Millisecond) })
	}
	wg.Wait()
}

// stop ends the job's group: SIGTERM, SIGKILL after grace (at once if
// grace is 0), and waits for its end.
func (j *Job) stop(grace time.Duration) {
	select {
	case <-j.done:
		return
	default:
	}
	if grace > 0 {
		_ = syscall.Kill(-j.PID, syscall.SIGTERM)
		select {
		case <-j.done:
			return
		case <-time.After(grace):
		}
	}
	_ = syscall.Kill(-j.PID, syscall.SIGKILL)
	<-j.done
}

// Info describes the job now.
func (j *Job) Info() JobInfo {
	i := JobInfo{ID: j.ID, SessionID: j.SessionID, Command: j.Command, Dir: j.Dir, PID: j.PID, Started: j.Started, Running: true}
	select {
	case <-j.done:
		i.Running, i.ExitCode = false, j.exit
	default:
	}
	return i
}

// Read is what a job wrote since the last Read.
type Read struct {
	// Output is the new output.
	Output string
	// Dropped counts new bytes that were no longer kept (the process
	// wrote more than the cap between two reads).
	Dropped int64
	// Matched says the pattern asked for was found in Output.
	Matched bool
	// TimedOut says the wait ended before the pattern appeared.
	TimedOut bool
	// Info is the job's state after the read.
	Info JobInfo
}

// Read returns the job's output since the last Read. With a pattern it
// first waits, up to wait, until the pattern appears in that output or
// the process ends; cancelling ctx ends the wait too.
func (j *Job) Read(ctx context.Context, pattern *regexp.Regexp, wait time.Duration) Read {
	var deadline <-chan time.Time
	if pattern != nil {
		t := time.NewTimer(max(wait, 0))
		defer t.Stop()
		deadline = t.C
	}
	for {
		changed := j.out.changedCh()
		text, dropped := j.out.peek()
		ended := false
		select {
		case <-j.done:
			ended = true
		default:
		}
		if pattern == nil || pattern.MatchString(text) || ended {
			// Once ended, the output is whole: take the last of it.
			if ended {
				text, dropped = j.out.peek()
			}
			j.out.consume()
			return Read{Output: text, Dropped: dropped, Matched: pattern != nil && pattern.MatchString(text), Info: j.Info()}
		}
		select {
		case <-changed:
		case <-j.done:
		case <-deadline:
			text, dropped = j.out.peek()
			j.out.consume()
			return Read{Output: text, Dropped: dropped, TimedOut: true, Info: j.Info()}
		case <-ctx.Done():
			text, dropped = j.out.peek()
			j.out.consume()
			return Read{Output: text, Dropped: dropped, TimedOut: true, Info: j.Info()}
		}
	}
}

// jobOutput keeps the latest output of a job and how far it was read.
type jobOutput struct {
	mu      sync.Mutex
	max     int
	data    []byte // the latest bytes, at most max
	start   int64  // offset of data[0] in the whole output
	read    int64  // offset up to which the output was read
	changed chan struct{}
}

func (o *jobOutput) init(max int) {
	o.max = max
	o.changed = make(chan struct{})
}

func (o *jobOutput) write(p []byte) {
	o.mu.Lock()
	o.data = append(o.data, p...)
	if over := len(o.data) - o.max; over > 0 {
		o.data = append(o.data[:0], o.data[over:]...)
		o.start += int64(over)
	}
	close(o.changed)
	o.changed = make(chan struct{})
	o.mu.Unlock()
}

// wake wakes readers waiting for a change.
func (o *jobOutput) wake() { o.write(nil) }

func (o *jobOutput) changedCh() <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.changed
}

// peek returns the output not read yet and how many of its bytes are no
// longer kept.
func (o *jobOutput) peek() (string, int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	from := max(o.read, o.start)
	return string(o.data[from-o.start:]), from - o.read
}

// consume marks everything written so far as read.
func (o *jobOutput) consume() {
	o.mu.Lock()
	o.read = o.start + int64(len(o.data))
	o.mu.Unlock()
}

func cmp(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}
