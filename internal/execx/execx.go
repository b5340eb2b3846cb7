// Package execx runs shell commands for tools: in their own process group
// (killed, with everything it started, on timeout, on cancellation and when
// the command ends), with an environment built from an allow-list, output
// streamed as it comes and captured as head + tail within a cap. [Jobs]
// runs the same kind of command in the background — a dev server, a
// watcher — with its output kept for later reads, and kills its group
// when it is stopped, when mx-claw exits, and (through the records of
// [Groups]) after a crash, at the next start.
//
// A [Runner] runs them inside a session's sandbox (sandbox.Session), which
// also sets their resource limits, and records their process groups
// ([Groups]) so that a later mx-claw kills what a killed one left behind;
// the group's leader also dies with mx-claw (PR_SET_PDEATHSIG). [Run]
// runs a command outside any sandbox: hooks, the user's own programs.
//
// Imported by the tools that run commands and by hooks; it knows nothing
// of the agent.
package execx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mx-claw/mx-claw/internal/sandbox"
)

// DefaultEnvAllow is the environment a command inherits from mx-claw's own
// environment; everything else (API keys in particular) is left out.
var DefaultEnvAllow = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES",
	"TERM", "TZ", "TMPDIR", "GOPATH", "GOROOT", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOPROXY",
	"CARGO_HOME", "RUSTUP_HOME", "JAVA_HOME", "NVM_DIR", "PYENV_ROOT", "VIRTUAL_ENV",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
}

// fixedEnv is set for every command so that tools do not wait on a pager or
// a prompt.
var fixedEnv = []string{"PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "NO_COLOR=1"}

// Secret reports whether an environment variable's name looks like it holds
// a credential; such variables are never passed to a command, even if
// allowed.
func Secret(name string) bool {
	n := strings.ToUpper(name)
	if strings.HasPrefix(n, "MX_CLAW_") {
		return true
	}
	for _, s := range []string{"API_KEY", "APIKEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE_KEY", "ACCESS_KEY"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// Env builds a command's environment from environ (os.Environ() form):
// the allowed names, never a Secret one, plus fixed settings.
func Env(environ []string, allow []string) []string {
	allowed := make(map[string]bool, len(allow))
	for _, n := range allow {
		allowed[n] = true
	}
	out := make([]string, 0, len(allow)+len(fixedEnv))
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if ok && allowed[name] && !Secret(name) {
			out = append(out, kv)
		}
	}
	return append(out, fixedEnv...)
}

// Command is a shell command to run.
type Command struct {
	// Script is run with `bash -c`.
	Script string
	// Dir is the working directory.
	Dir string
	// Env is the complete environment (see Env).
	Env []string
	// Timeout ends the command (and its process group) after this long;
	// zero means no timeout beyond ctx.
	Timeout time.Duration
	// MaxOutput caps the captured output: the first and last halves are
	// kept with a marker between them. Zero means 64 KiB.
	MaxOutput int
	// Output, if set, receives the combined stdout and stderr as it comes,
	// from one goroutine.
	Output func(chunk []byte)
	// Spill, if set, receives the whole combined output as it comes, from
	// the same goroutine as Output; its errors are ignored.
	Spill io.Writer
}

// Result is how a command ended.
type Result struct {
	// Output is the combined stdout and stderr, capped (see Truncated).
	Output string
	// TotalBytes is the size of the whole output.
	TotalBytes int64
	// Truncated says the middle of the output was left out of Output.
	Truncated bool
	// ExitCode is the exit status, or -1 if the command was killed.
	ExitCode int
	// TimedOut says the command was killed because of Timeout.
	TimedOut bool
	// Duration is how long it ran.
	Duration time.Duration
}

// Run runs c outside any sandbox and waits for it (see Runner.Run).
func Run(ctx context.Context, c Command) (Result, error) {
	return (*Runner)(nil).Run(ctx, c)
}

// Runner runs commands in a session's sandbox and records their process
// groups. The nil Runner runs them unconfined and unrecorded.
type Runner struct {
	// Sandbox is the sandbox the commands run in; nil runs them with
	// bash directly.
	Sandbox *sandbox.Session
	// Groups records the commands' process groups; nil records nothing.
	Groups *Groups
}

// Enforced reports whether the runner's commands run confined.
func (r *Runner) Enforced() bool { return r != nil && r.Sandbox.Enforced() }

// Unconfined returns a runner for commands the user approved to run
// outside the sandbox: limits, temp dir and process lifecycle stay.
func (r *Runner) Unconfined() *Runner {
	if r == nil || r.Sandbox == nil {
		return r
	}
	return &Runner{Sandbox: r.Sandbox.Unconfined(), Groups: r.Groups}
}

// Run runs c and waits for it. Cancelling ctx kills the whole process
// group and returns ctx's error with the output so far. A command that
// cannot be started, or whose sandbox cannot be set up (a
// *sandbox.SetupError; the command did not run), is an error; a command
// that fails is a Result with its exit code.
func (rn *Runner) Run(ctx context.Context, c Command) (Result, error) {
	if c.MaxOutput <= 0 {
		c.MaxOutput = 64 << 10
	}
	env := c.Env
	if env == nil {
		env = []string{}
	}
	argv := []string{"bash", "-c", c.Script}
	var launch *sandbox.Launch
	cmd := exec.Command(argv[0], argv[1:]...)
	if rn != nil && rn.Sandbox != nil {
		l, err := rn.Sandbox.Prepare(sandbox.Command{Argv: argv, Dir: c.Dir, Env: env})
		if err != nil {
			return Result{}, err
		}
		launch = l
		defer launch.Done()
		cmd = &exec.Cmd{Path: l.Path, Args: l.Args, ExtraFiles: l.ExtraFiles}
		env = l.Env
	}
	cmd.Dir = c.Dir
	cmd.Env = env
	cmd.SysProcAttr = groupAttr()
	r, w, err := os.Pipe()
	if err != nil {
		return Result{}, err
	}
	cmd.Stdout, cmd.Stderr = w, w
	start := time.Now()
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return Result{}, fmt.Errorf("start %s: %w", filepath.Base(cmd.Path), err)
	}
	w.Close() // the child holds its own copy
	pgid := cmd.Process.Pid
	killGroup := func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) }
	if rn != nil && rn.Groups != nil {
		defer rn.Groups.add(pgid)()
	}
	if launch != nil {
		if err := launch.Started(pgid); err != nil {
			killGroup()
			cmd.Wait()
			r.Close()
			return Result{}, err
		}
	}

	capture := newCapture(c.MaxOutput)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				capture.Write(buf[:n])
				if c.Spill != nil {
					_, _ = c.Spill.Write(buf[:n])
				}
				if c.Output != nil {
					c.Output(buf[:n])
				}
			}
			if err != nil {
				return
			}
		}
	}()

	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()

	var timeout <-chan time.Time
	if c.Timeout > 0 {
		t := time.NewTimer(c.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	res := Result{ExitCode: -1}
	var runErr error
	select {
	case err := <-waitDone:
		res.ExitCode = exitCode(err)
		// The command is done; whatever it left running in its group
		// goes too, so no orphan outlives the call (and keeps the pipe).
		killGroup()
	case <-timeout:
		res.TimedOut = true
		killGroup()
		<-waitDone
	case <-ctx.Done():
		killGroup()
		<-waitDone
		runErr = ctx.Err()
	}
	// Children outside the group may still hold the pipe; do not wait for
	// them forever.
	select {
	case <-readDone:
	case <-time.After(2 * time.Second):
		r.Close()
		<-readDone
	}
	r.Close()
	res.Duration = time.Since(start)
	res.Output, res.TotalBytes, res.Truncated = capture.Result()
	if launch != nil && runErr == nil && !res.TimedOut {
		if err := launch.SetupFailure(res.Output, res.ExitCode); err != nil {
			return Result{}, err
		}
	}
	return res, runErr
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return -1
}

// capture keeps the first and last halves of a stream within a cap.
type capture struct {
	max   int
	head  bytes.Buffer
	tail  []byte // ring of the last max/2 bytes
	pos   int
	full  bool
	total int64
}

func newCapture(max int) *capture { return &capture{max: max} }

var _ io.Writer = (*capture)(nil)

func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	half := c.max / 2
	if room := half - c.head.Len(); room > 0 {
		k := min(room, len(p))
		c.head.Write(p[:k])
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if c.tail == nil {
		c.tail = make([]byte, c.max-half)
	}
	for len(p) > 0 {
		k := copy(c.tail[c.pos:], p)
		p = p[k:]
		c.pos += k
		if c.pos == len(c.tail) {
			c.pos = 0
			c.full = true
		}
	}
	return n, nil
}

// Result returns the captured text, the total size and whether the middle
// was dropped.
func (c *capture) Result() (string, int64, bool) {
	if c.tail == nil {
		return c.head.String(), c.total, false
	}
	var tail []byte
	if c.full {
		tail = append(append([]byte{}, c.tail[c.pos:]...), c.tail[:c.pos]...)
	} else {
		tail = c.tail[:c.pos]
	}
	kept := int64(c.head.Len() + len(tail))
	if kept == c.total {
		return c.head.String() + string(tail), c.total, false
	}
	marker := fmt.Sprintf("\n… [%d bytes of output omitted] …\n", c.total-kept)
	return strings.ToValidUTF8(c.head.String(), "\uFFFD") + marker + strings.ToValidUTF8(string(tail), "\uFFFD"), c.total, true
}
