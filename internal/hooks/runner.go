package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mx-claw/mx-claw/internal/execx"
)

// Limits on what is read from a hook.
const (
	maxStdout  = 1 << 20  // JSON or plain context on stdout
	maxStderr  = 16 << 10 // the block reason or warning on stderr
	maxContext = 10_000   // additional context one hook may add
)

// Runner runs the hooks of a configuration. Its fields are read, never
// written, by Run, so one Runner may serve concurrent calls; set them
// before the first.
type Runner struct {
	// Config holds the hooks; nil has none.
	Config *Config
	// Environ is the environment hooks inherit from, in os.Environ() form,
	// filtered through EnvAllow; nil means os.Environ() at each Run.
	Environ []string
	// EnvAllow lists the variables passed on from Environ (secrets never
	// are, see execx.Env); nil means execx.DefaultEnvAllow.
	EnvAllow []string
	// DefaultTimeout applies to hooks whose entry gives none; zero means
	// DefaultTimeout (60 s).
	DefaultTimeout time.Duration
}

// Result is what the hooks of one event said, folded into one (see the
// package doc for how).
type Result struct {
	// Decision is the strongest decision any hook gave.
	Decision Decision
	// Reason joins, one per line, the reasons of the hooks that gave
	// Decision (or a block or deny, which count as one kind): for a block
	// or deny it is what the model is told.
	Reason string
	// UpdatedInput is the tool input the last PreToolUse hook that gave
	// one wants run instead, a JSON object. The caller must validate it
	// against the tool's schema again and decide permissions on it.
	UpdatedInput json.RawMessage
	// AdditionalContext joins, one per line, what hooks want the model to
	// know (additionalContext, or plain stdout of UserPromptSubmit and
	// SessionStart hooks).
	AdditionalContext string
	// Halt says a hook asked, with "continue": false, that the agent stop
	// after this event; StopReason is for the user, not the model.
	Halt bool
	// StopReason joins the stopReason of the hooks that set Halt.
	StopReason string
	// Warnings are messages for the user: failures, timeouts, output that
	// could not be used, systemMessage. They change nothing.
	Warnings []string
	// Ran is how many hooks were started.
	Ran int
}

// Blocked reports whether the hooks blocked or denied.
func (r Result) Blocked() bool { return r.Decision.refuses() }

// Run runs, one after the other, every hook configured for ev that matches
// it, and folds what they said into a Result. It returns when the last
// hook has ended; no process a hook started outlives it. Cancelling ctx
// kills the running hook and skips the rest, with a warning; the Result
// then holds only what the hooks that finished said.
func (r *Runner) Run(ctx context.Context, ev Event) Result {
	var res Result
	if r == nil {
		return res
	}
	hooks := r.Config.Matching(ev)
	if len(hooks) == 0 {
		return res
	}
	payload, err := ev.stdin()
	if err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s hooks not run: encode their input: %v", ev.Name, err))
		return res
	}
	reasons := map[int][]string{}
	var contexts, stops []string
	for _, h := range hooks {
		if err := ctx.Err(); err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s hooks cancelled: %v", ev.Name, err))
			break
		}
		res.Ran++
		o, err := r.runOne(ctx, h, ev, payload)
		if err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s hooks cancelled: %v", ev.Name, err))
			break
		}
		res.Warnings = append(res.Warnings, o.warnings...)
		if o.decision != None {
			if o.decision.strength() > res.Decision.strength() {
				res.Decision = o.decision
			}
			if o.reason != "" {
				reasons[class(o.decision)] = append(reasons[class(o.decision)], o.reason)
			}
		}
		if o.updatedInput != nil {
			res.UpdatedInput = o.updatedInput
		}
		if o.context != "" {
			if len(o.context) > maxContext {
				o.context = strings.ToValidUTF8(o.context[:maxContext], "") + " … [truncated]"
				res.Warnings = append(res.Warnings, fmt.Sprintf("hook %q: additional context cut to %d bytes", label(h.Command), maxContext))
			}
			contexts = append(contexts, o.context)
		}
		if o.halt {
			res.Halt = true
			if o.stopReason != "" {
				stops = append(stops, o.stopReason)
			}
		}
	}
	if res.Decision != None {
		res.Reason = strings.Join(reasons[class(res.Decision)], "\n")
	}
	res.AdditionalContext = strings.Join(contexts, "\n")
	res.StopReason = strings.Join(stops, "\n")
	return res
}

// class groups decisions whose reasons are joined together: block and deny
// are one kind.
func class(d Decision) int {
	if d.refuses() {
		return Deny.strength()
	}
	return d.strength()
}

// runOne runs hook h for ev with payload on its stdin. Failures of the
// hook are warnings in the outcome; the error is ctx's, when it ended the
// hook.
func (r *Runner) runOne(ctx context.Context, h Hook, ev Event, payload []byte) (outcome, error) {
	name := label(h.Command)
	warning := func(format string, args ...any) outcome {
		return outcome{warnings: []string{fmt.Sprintf("hook %q", name) + fmt.Sprintf(format, args...)}}
	}
	// execx gives a command no stdin and merges its stdout and stderr, so
	// the script takes stdin from, and sends stderr to, files of its own.
	dir, err := os.MkdirTemp("", "mx-claw-hook-")
	if err != nil {
		return warning(" not run: %v", err), nil
	}
	defer os.RemoveAll(dir)
	inPath, errPath := filepath.Join(dir, "stdin.json"), filepath.Join(dir, "stderr")
	if err := os.WriteFile(inPath, payload, 0o600); err != nil {
		return warning(" not run: %v", err), nil
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = r.DefaultTimeout
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	res, err := execx.Run(ctx, execx.Command{
		Script:    "exec <" + shellQuote(inPath) + " 2>" + shellQuote(errPath) + "\n" + h.Command,
		Dir:       ev.Cwd,
		Env:       r.env(ev.Cwd),
		Timeout:   timeout,
		MaxOutput: maxStdout,
	})
	if err != nil {
		if ctx.Err() != nil {
			return outcome{}, ctx.Err()
		}
		return warning(" not run: %v", err), nil
	}
	stderr := readCapped(errPath, maxStderr)
	switch {
	case res.TimedOut:
		return warning(" timed out after %s", seconds(timeout)), nil
	case res.ExitCode == 0:
		return interpret(ev.Name, name, res.Output), nil
	case res.ExitCode == 2:
		return blocked(ev.Name, name, stderr), nil
	case stderr == "":
		return warning(" exited with status %d", res.ExitCode), nil
	}
	return warning(" exited with status %d: %s", res.ExitCode, firstLines(stderr)), nil
}

// env returns a hook's environment: the allowed part of the runner's,
// plus the project directory under mx-claw's and Claude Code's names.
func (r *Runner) env(cwd string) []string {
	environ, allow := r.Environ, r.EnvAllow
	if environ == nil {
		environ = os.Environ()
	}
	if allow == nil {
		allow = execx.DefaultEnvAllow
	}
	env := execx.Env(environ, allow)
	if cwd != "" {
		env = append(env, "MX_CLAW_PROJECT_DIR="+cwd, "CLAUDE_PROJECT_DIR="+cwd)
	}
	return env
}

// readCapped returns up to max bytes of the file at path, trimmed, or ""
// if it cannot be read.
func readCapped(path string, max int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	data, _ := io.ReadAll(io.LimitReader(f, max+1))
	s := string(data)
	if int64(len(data)) > max {
		s = s[:max] + " …"
	}
	return strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD"))
}

// label names a hook in messages: its command's first line, shortened.
func label(command string) string {
	const maxRunes = 120
	s, _, more := strings.Cut(strings.TrimSpace(command), "\n")
	if utf8.RuneCountInString(s) > maxRunes {
		s = string([]rune(s)[:maxRunes])
		more = true
	}
	if more {
		s += "…"
	}
	return s
}

// seconds formats a timeout the way settings give it: "60s", "1.5s".
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// shellQuote quotes s for bash.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
