package mcp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// A stdio server is a child process mx-claw starts itself, rather than
// through the SDK's CommandTransport, so that it can: give the child its
// own process group (and kill the group, with whatever the server
// started, when it stops); keep the pipes open after the child exits
// until their last byte is read (exec.Cmd's own pipes are closed by
// Wait); send stderr to a log file; and tell a message over the size cap
// from any other broken connection.

// maxLogBytes is the size above which a server's log is started afresh
// (the old one kept as .1) when the server starts.
const maxLogBytes = 4 << 20

// stopGrace is how long a stopping server gets after its stdin closes, and
// again after SIGTERM, before it is killed.
const stopGrace = 2 * time.Second

// process is a running stdio server.
type process struct {
	cmd    *exec.Cmd
	stdin  *os.File // our end of the child's stdin
	stdout *frameReader
	log    *os.File

	done    chan struct{} // closed when the child has exited
	waitErr error         // how it exited; set before done closes

	stopOnce sync.Once
	// killed is set when stop had to signal the child (it had not
	// exited by itself when its stdin closed).
	killed atomic.Bool
}

// startProcess starts the command of e in dir with env, its stderr
// appended to logPath. Messages it writes over maxMessage bytes make reads
// fail (see frameReader).
func startProcess(e *Expanded, dir string, env []string, logPath string, maxMessage int) (*process, error) {
	path, err := lookPath(e.Command, env)
	if err != nil {
		return nil, err
	}
	logf, err := openLog(logPath)
	if err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		logf.Close()
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd := exec.Command(path, e.Args...)
	cmd.Args[0] = e.Command
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, logf
	cmd.SysProcAttr = procAttr()
	fmt.Fprintf(logf, "--- %s: starting %s\n", time.Now().Format(time.RFC3339), e.Command)
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{inR, inW, outR, outW, logf} {
			f.Close()
		}
		return nil, err
	}
	// The child has its copies; ours would keep the pipes open forever.
	inR.Close()
	outW.Close()
	p := &process{cmd: cmd, stdin: inW, stdout: &frameReader{r: outR, limit: maxMessage}, log: logf, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// lookPath finds command the way the child's PATH would.
func lookPath(command string, env []string) (string, error) {
	if strings.ContainsRune(command, filepath.Separator) {
		return command, nil
	}
	for _, kv := range env {
		if dirs, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, d := range filepath.SplitList(dirs) {
				if d == "" {
					d = "."
				}
				p := filepath.Join(d, command)
				if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
					return p, nil
				}
			}
			return "", fmt.Errorf("%q not found in PATH", command)
		}
	}
	return exec.LookPath(command)
}

// openLog opens a server's log for appending, starting it afresh when it
// has grown too big.
func openLog(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create log directory: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil && fi.Size() > maxLogBytes {
		_ = os.Rename(path, path+".1")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	return f, nil
}

// exited reports whether the child has exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stoppedByUs reports whether stop had to signal the child.
func (p *process) stoppedByUs() bool { return p.killed.Load() }

// exitStatus describes how the child ended, or "" while it runs.
func (p *process) exitStatus() string {
	if !p.exited() {
		return ""
	}
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		return ee.ProcessState.String()
	}
	if p.waitErr != nil {
		return p.waitErr.Error()
	}
	return "exit status 0"
}

// stop ends the server: stdin is closed (the polite way to stop a stdio
// server), then its process group gets SIGTERM and, if still there,
// SIGKILL. It waits for the child and is safe to call more than once.
func (p *process) stop() {
	p.stopOnce.Do(func() {
		p.stdin.Close()
		wait := func() bool {
			select {
			case <-p.done:
				return true
			case <-time.After(stopGrace):
				return false
			}
		}
		if !p.exited() && !wait() {
			p.killed.Store(true)
			signalGroup(p.cmd, syscall.SIGTERM)
			if !wait() {
				signalGroup(p.cmd, syscall.SIGKILL)
				<-p.done
			}
		}
		// Whatever the server started in its group goes with it.
		signalGroup(p.cmd, syscall.SIGKILL)
		p.stdout.Close()
		p.log.Close()
	})
}

// frameReader reads a server's newline-delimited messages and fails once
// one is longer than limit bytes: before the SDK would have buffered it
// whole.
type frameReader struct {
	r     io.ReadCloser
	limit int
	n     int // bytes since the last newline
	over  atomic.Bool
}

func (f *frameReader) Read(p []byte) (int, error) {
	if f.over.Load() {
		return 0, ErrResultTooLarge
	}
	n, err := f.r.Read(p)
	for _, c := range p[:n] {
		if c == '\n' {
			f.n = 0
			continue
		}
		f.n++
		if f.limit > 0 && f.n > f.limit {
			f.over.Store(true)
			return 0, ErrResultTooLarge
		}
	}
	return n, err
}

// Close closes the pipe; it may be called more than once.
func (f *frameReader) Close() error {
	err := f.r.Close()
	if errors.Is(err, os.ErrClosed) {
		return nil
	}
	return err
}

// stdinWriter is the child's stdin for the SDK, which must not close it:
// stop does, as the first step of stopping the server.
type stdinWriter struct{ p *process }

func (w stdinWriter) Write(b []byte) (int, error) { return w.p.stdin.Write(b) }
func (w stdinWriter) Close() error                { return nil }
