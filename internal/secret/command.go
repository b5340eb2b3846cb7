package secret

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// CommandTimeout is how long an external secret command may run.
const CommandTimeout = 3 * time.Second

// CommandMaxOutput caps an external secret command's standard output; a
// helper that prints more gives no value.
const CommandMaxOutput = 1 << 20

// commandEnvAllow is all a helper inherits from mx-claw's environment,
// space-separated.
const commandEnvAllow = "PATH HOME USER LOGNAME TMPDIR LANG LC_ALL"

// KeyVar is the variable that tells a helper which key is wanted.
const KeyVar = "MX_CLAW_SECRET_KEY"

// Command reads secrets from an external helper (MX_CLAW_SECRET_COMMAND),
// such as `vault read -field=key mx-claw` or `pass show mx-claw/openai`.
// It is read-only.
//
// The script runs through the shell with only PATH, HOME, USER, LOGNAME,
// TMPDIR, LANG and LC_ALL from mx-claw's environment plus
// MX_CLAW_SECRET_KEY=provider:NAME, for at most Timeout, in its own process
// group (killed with everything it started when the time is up). Its
// standard error is captured and dropped, never shown. It may print one
// value, or "key=value" lines of which the line for the wanted key is
// used. A helper that fails, times out, prints nothing or prints more than
// MaxOutput bytes gives no value.
type Command struct {
	// Script is the shell command.
	Script string
	// Getenv reads mx-claw's environment (os.Getenv in production).
	Getenv func(string) string
	// Timeout defaults to CommandTimeout.
	Timeout time.Duration
	// MaxOutput defaults to CommandMaxOutput.
	MaxOutput int
}

// Name returns "command".
func (c *Command) Name() string { return NameCommand }

// errTooMuch stops a helper whose output passed the cap.
var errTooMuch = errors.New("secret command output over the cap")

// capWriter keeps at most max bytes; past that it fails (stdout) or drops
// silently (stderr).
type capWriter struct {
	buf  bytes.Buffer
	max  int
	fail bool
	over bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	if w.buf.Len()+len(p) > w.max {
		w.over = true
		if w.fail {
			return 0, errTooMuch
		}
		return len(p), nil
	}
	return w.buf.Write(p)
}

// Get runs the helper for key and parses its output.
func (c *Command) Get(ctx context.Context, key string) (string, error) {
	if strings.TrimSpace(c.Script) == "" {
		return "", ErrNotFound
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = CommandTimeout
	}
	max := c.MaxOutput
	if max <= 0 {
		max = CommandMaxOutput
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var cmd *exec.Cmd
	if runtime.GOOS == "windows" {
		cmd = exec.CommandContext(ctx, "cmd", "/C", c.Script)
	} else {
		cmd = exec.CommandContext(ctx, "/bin/sh", "-c", c.Script)
	}
	cmd.Env = c.env(key)
	stdout := &capWriter{max: max, fail: true}
	stderr := &capWriter{max: 64 << 10} // captured so it never reaches a terminal; dropped
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Stdin = nil
	setProcessGroup(cmd)
	cmd.WaitDelay = 500 * time.Millisecond
	if err := cmd.Run(); err != nil || stdout.over || ctx.Err() != nil {
		return "", ErrNotFound
	}
	return parseHelperOutput(stdout.buf.String(), key)
}

// env is the helper's whole environment.
func (c *Command) env(key string) []string {
	env := make([]string, 0, 8)
	if c.Getenv != nil {
		for _, name := range strings.Fields(commandEnvAllow) {
			if v := c.Getenv(name); v != "" {
				env = append(env, name+"="+v)
			}
		}
	}
	return append(env, KeyVar+"="+key)
}

// parseHelperOutput finds key's value in a helper's output: the line
// "key=value" if there is one, else the output itself when it is a single
// line that is not a "provider:OTHER=value" line.
func parseHelperOutput(out, key string) (string, error) {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	for _, l := range lines {
		if v, ok := strings.CutPrefix(l, key+"="); ok {
			if v = strings.TrimSpace(v); v != "" {
				return v, nil
			}
			return "", ErrNotFound
		}
	}
	if len(lines) != 1 {
		return "", ErrNotFound
	}
	if name, _, ok := strings.Cut(lines[0], "="); ok && strings.HasPrefix(name, "provider:") && !strings.ContainsAny(name, " \t") {
		return "", ErrNotFound // a key=value line for another key
	}
	return lines[0], nil
}
