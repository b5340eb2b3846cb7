package hooks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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

// Runner runs the hooks of a configuration. Its exported fields are read,
// never written, by its methods, so one Runner may serve concurrent calls;
// set them before the first. A Runner must not be copied once used.
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
	// DataDir holds, per session, the files hooks are given: the
	// transcript ([Runner.TranscriptPath]) and the CLAUDE_ENV_FILE of
	// SessionStart hooks ([Runner.EnvFile]). Empty gives hooks neither.
	DataDir string

	bgOnce   sync.Once
	bgCtx    context.Context    // async hooks run under it
	bgCancel context.CancelFunc // kills them
	bg       sync.WaitGroup
	bgMu     sync.Mutex
	bgWarn   []string // what finished async hooks said, for Wait
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
	// UpdatedInput is the tool input the last hook that gave one wants run
	// instead, as the mx-claw tool's arguments (a JSON object). The caller
	// must validate it against the tool's schema again and decide
	// permissions on it.
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
	// Ran is how many hooks were started, async ones included.
	Ran int
}

// Blocked reports whether the hooks blocked or denied.
func (r Result) Blocked() bool { return r.Decision.refuses() }

// job is one hook to run with its stdin.
type job struct {
	hook    Hook
	payload []byte
}

// jobs returns the hooks to run for ev with their stdin, in order: for a
// tool event, the hooks of each view of the call (see [views]).
func (r *Runner) jobs(ev *Event) ([]job, error) {
	if r == nil || r.Config == nil {
		return nil, nil
	}
	if !toolEvent(ev.Name) {
		hooks := r.Config.matching(ev.Name, subject(*ev))
		if len(hooks) == 0 {
			return nil, nil
		}
		payload, err := ev.stdin(nil)
		if err != nil {
			return nil, err
		}
		out := make([]job, len(hooks))
		for i, h := range hooks {
			out[i] = job{h, payload}
		}
		return out, nil
	}
	if !r.Config.Has(ev.Name) {
		return nil, nil
	}
	var out []job
	for _, v := range views(ev.Cwd, ev.ToolName, ev.ToolInput) {
		hooks := r.Config.matching(ev.Name, "", v.names(ev.ToolName)...)
		if len(hooks) == 0 {
			continue
		}
		payload, err := ev.stdin(&v)
		if err != nil {
			return nil, err
		}
		for _, h := range hooks {
			out = append(out, job{h, payload})
		}
	}
	return out, nil
}

// Wants reports whether any hook would run for ev, so that a caller can
// skip the work of preparing for hooks (storing, writing the transcript)
// when none would.
func (r *Runner) Wants(ev Event) bool {
	if r == nil || r.Config == nil || !r.Config.Has(ev.Name) {
		return false
	}
	if !toolEvent(ev.Name) {
		return len(r.Config.matching(ev.Name, subject(ev))) > 0
	}
	for _, v := range views(ev.Cwd, ev.ToolName, ev.ToolInput) {
		if len(r.Config.matching(ev.Name, "", v.names(ev.ToolName)...)) > 0 {
			return true
		}
	}
	return false
}

// Snapshot records what the files a call of ev's tool with ev's input
// writes hold now, for the tool_response of its PostToolUse hooks. It
// reads nothing (and returns nil) unless such hooks would run; call it
// just before the tool runs.
func (r *Runner) Snapshot(ev Event) *Snapshot {
	if r == nil || r.Config == nil {
		return nil
	}
	for _, name := range []EventName{PostToolUse, PostToolUseFailure} {
		ev.Name = name
		if r.Wants(ev) {
			return takeSnapshot(views(ev.Cwd, ev.ToolName, ev.ToolInput))
		}
	}
	return nil
}

// Run runs, one after the other, every hook configured for ev that matches
// it, and folds what they said into a Result. It returns when the last
// hook has ended; no process a hook started outlives it. Hooks marked
// async are started in the background and decide nothing: [Runner.Wait]
// waits for them. Cancelling ctx kills the running hook and skips the
// rest, with a warning; the Result then holds only what the hooks that
// finished said.
func (r *Runner) Run(ctx context.Context, ev Event) Result {
	var res Result
	jobs, err := r.jobs(&ev)
	if err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s hooks not run: encode their input: %v", ev.Name, err))
		return res
	}
	reasons := map[int][]string{}
	var contexts, stops []string
	for _, j := range jobs {
		h := j.hook
		if err := ctx.Err(); err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s hooks cancelled: %v", ev.Name, err))
			break
		}
		res.Ran++
		if h.Async {
			r.runAsync(h, ev, j.payload)
			continue
		}
		o, err := r.runOne(ctx, h, ev, j.payload)
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
			if in, ok := fromClaude(ev.ToolName, o.updatedInput); ok {
				res.UpdatedInput = in
			} else {
				res.Warnings = append(res.Warnings, fmt.Sprintf("hook %q: updatedInput ignored: a %s call cannot be rewritten by a hook", label(h.Command), ev.ToolName))
			}
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

// runAsync starts hook h in the background. What it says is only reported
// (by Wait): an async hook cannot block, allow or rewrite anything, since
// the session has moved on.
func (r *Runner) runAsync(h Hook, ev Event, payload []byte) {
	r.bgInit()
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		o, err := r.runOne(r.bgCtx, h, ev, payload)
		var warn []string
		switch {
		case err != nil:
			warn = []string{fmt.Sprintf("async hook %q cancelled: %v", label(h.Command), err)}
		default:
			warn = o.warnings
			if o.decision.refuses() && o.reason != "" {
				warn = append(warn, fmt.Sprintf("async hook %q: %s", label(h.Command), firstLines(o.reason)))
			}
		}
		r.bgMu.Lock()
		r.bgWarn = append(r.bgWarn, warn...)
		r.bgMu.Unlock()
	}()
}

// bgInit makes the context async hooks run under.
func (r *Runner) bgInit() {
	r.bgOnce.Do(func() { r.bgCtx, r.bgCancel = context.WithCancel(context.Background()) })
}

// Wait waits for the async hooks started so far to end and returns what
// they said for the user. If ctx ends first, the hooks still running are
// killed (with everything they started) before Wait returns.
func (r *Runner) Wait(ctx context.Context) []string {
	if r == nil {
		return nil
	}
	done := make(chan struct{})
	go func() { r.bg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		r.bgInit()
		r.bgCancel()
		<-done
	}
	r.bgMu.Lock()
	defer r.bgMu.Unlock()
	w := r.bgWarn
	r.bgWarn = nil
	return w
}

// NewNotices returns the configuration's notices ([Config.Notices]) the
// user has not been shown yet, and records them as shown in DataDir, so
// that each is shown once, not on every run. Without a DataDir every
// notice is new.
func (r *Runner) NewNotices() []string {
	if r == nil || r.Config == nil {
		return nil
	}
	all := r.Config.Notices()
	if r.DataDir == "" || len(all) == 0 {
		return all
	}
	path := filepath.Join(r.DataDir, "notices-shown")
	seen := map[string]bool{}
	if data, err := os.ReadFile(path); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			seen[l] = true
		}
	}
	var fresh []string
	var add strings.Builder
	for _, n := range all {
		sum := sha256.Sum256([]byte(n))
		key := hex.EncodeToString(sum[:16])
		if !seen[key] {
			seen[key] = true
			fresh = append(fresh, n)
			add.WriteString(key + "\n")
		}
	}
	if add.Len() > 0 && os.MkdirAll(r.DataDir, 0o700) == nil {
		if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
			_, _ = f.WriteString(add.String())
			f.Close()
		}
	}
	return fresh
}

// SessionDir returns the directory of a session's files for its hooks
// (its transcript and CLAUDE_ENV_FILE), which goes with the session, or
// "" without a DataDir.
func (r *Runner) SessionDir(sessionID string) string {
	if r == nil || r.DataDir == "" || sessionID == "" {
		return ""
	}
	return filepath.Join(r.DataDir, safeName(sessionID))
}

// TranscriptPath returns where the transcript of a session is written for
// its hooks, or "" without a DataDir.
func (r *Runner) TranscriptPath(sessionID string) string {
	if dir := r.SessionDir(sessionID); dir != "" {
		return filepath.Join(dir, "transcript.jsonl")
	}
	return ""
}

// EnvFile returns the session's CLAUDE_ENV_FILE: the file SessionStart
// hooks may write `export NAME=value` lines to, which the session's
// commands then run with. "" without a DataDir.
func (r *Runner) EnvFile(sessionID string) string {
	if dir := r.SessionDir(sessionID); dir != "" {
		return filepath.Join(dir, "env.sh")
	}
	return ""
}

// safeName makes a session id safe as one path element.
func safeName(id string) string {
	s := strings.Map(func(c rune) rune {
		if c == '/' || c == '\\' || c == 0 {
			return '_'
		}
		return c
	}, id)
	if s == "" || s == "." || s == ".." {
		return "_"
	}
	return s
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
		Env:       r.env(ev),
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
// plus the project directory under mx-claw's and Claude Code's names, and
// for SessionStart hooks CLAUDE_ENV_FILE.
func (r *Runner) env(ev Event) []string {
	cwd := ev.Cwd
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
	if ev.Name == SessionStart {
		if f := r.EnvFile(ev.SessionID); f != "" && os.MkdirAll(filepath.Dir(f), 0o700) == nil {
			env = append(env, "CLAUDE_ENV_FILE="+f)
		}
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
