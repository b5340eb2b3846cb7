package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// The backend names.
const (
	BackendBwrap    = "bwrap"
	BackendLandlock = "landlock"
	BackendSeatbelt = "seatbelt"
	BackendNone     = "none"
)

// Options configure a Manager.
type Options struct {
	// Backend forces a backend (bwrap, landlock, seatbelt, none); empty or
	// "auto" picks the best this machine runs. A forced backend that
	// cannot run fails every command (it never falls back).
	Backend string
	// BwrapPath is bubblewrap's path; empty finds bwrap on PATH.
	BwrapPath string
	// HelperPath is the binary that runs as the helper (HelperArg); empty
	// is this executable.
	HelperPath string
	// StateDir holds the proxy sockets; empty is a directory under the
	// system temp dir, removed by Close.
	StateDir string
}

// Status is which sandbox is in force, for `mx-claw sandbox status`,
// `mx-claw doctor` and the status line.
type Status struct {
	// Backend is bwrap, landlock, seatbelt or none.
	Backend string `json:"backend"`
	// Enforced says commands run confined.
	Enforced bool `json:"enforced"`
	// Reason says why this backend (or why none).
	Reason string `json:"reason,omitempty"`
	// Details are facts found while probing, e.g. "landlock ABI 7".
	Details []string `json:"details,omitempty"`
	// Processes says how the process limit is enforced.
	Processes string `json:"processes,omitempty"`
}

// Manager chooses the backend once and prepares commands for it. It is
// safe for concurrent use.
type Manager struct {
	opts Options

	probeOnce sync.Once
	status    Status

	mu      sync.Mutex
	told    bool
	masks   map[string]int // mount points bwrap creates, by path → users
	proxies map[string]*Proxy
	state   string
}

// NewManager returns a Manager; it probes the machine on first use.
func NewManager(o Options) *Manager {
	return &Manager{opts: o, masks: map[string]int{}, proxies: map[string]*Proxy{}}
}

// Status returns the backend in force (probing the first time).
func (m *Manager) Status() Status {
	m.probeOnce.Do(func() { m.status = probe(m.opts) })
	return m.status
}

// Notice returns, the first time it is called while no backend is in
// force, the plain warning to show the user; "" otherwise.
func (m *Manager) Notice() string {
	st := m.Status()
	if st.Enforced {
		return ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.told {
		return ""
	}
	m.told = true
	return "No command sandbox is in force (" + st.Reason + "): commands that are not read-only will ask for approval in every mode but bypass. `mx-claw sandbox status` explains."
}

// Close stops the proxies and removes the state directory.
func (m *Manager) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, p := range m.proxies {
		p.Close()
		delete(m.proxies, k)
	}
	if m.state != "" && m.opts.StateDir == "" {
		os.RemoveAll(m.state)
	}
	return nil
}

// stateDir returns (creating it) the directory for sockets.
func (m *Manager) stateDir() (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state != "" {
		return m.state, nil
	}
	if m.opts.StateDir != "" {
		if err := os.MkdirAll(m.opts.StateDir, 0o700); err != nil {
			return "", err
		}
		m.state = m.opts.StateDir
		return m.state, nil
	}
	d, err := os.MkdirTemp("", "mx-claw-sandbox-")
	if err != nil {
		return "", err
	}
	m.state = d
	return d, nil
}

// proxy returns the running proxy for a host list, starting it.
func (m *Manager) proxy(hosts []string) (*Proxy, error) {
	dir, err := m.stateDir()
	if err != nil {
		return nil, err
	}
	key := strings.Join(hosts, ",")
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.proxies[key]; ok {
		return p, nil
	}
	p, err := StartProxy(hosts, dir)
	if err != nil {
		return nil, err
	}
	m.proxies[key] = p
	return p, nil
}

// holdMasks records mount points a bwrap run may create, and returns the
// function that removes, after the run, those it created (absent before,
// empty now, no other run using them).
func (m *Manager) holdMasks(paths []string) func() {
	m.mu.Lock()
	var ours []string
	for _, p := range paths {
		if m.masks[p] == 0 {
			if _, err := os.Lstat(p); err == nil {
				continue // exists already: not ours to remove
			}
		}
		m.masks[p]++
		ours = append(ours, p)
	}
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, p := range ours {
			m.masks[p]--
			if m.masks[p] > 0 {
				continue
			}
			delete(m.masks, p)
			fi, err := os.Lstat(p)
			switch {
			case err != nil:
			case fi.Mode().IsRegular() && fi.Size() == 0:
				os.Remove(p)
			case fi.IsDir():
				os.Remove(p) // only succeeds when empty
			}
		}
	}
}

// adoptHeldMasks turns the read-only paths of plan that are placeholders
// of a run still going on into masks of this run too, so that they are
// held (not removed under this run) and hidden from git like its own.
func (m *Manager) adoptHeldMasks(plan *Plan) {
	m.mu.Lock()
	defer m.mu.Unlock()
	plan.ReadOnly = slices.DeleteFunc(slices.Clone(plan.ReadOnly), func(p string) bool {
		if m.masks[p] == 0 {
			return false
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return false
		}
		plan.Masks = append(plan.Masks, p)
		plan.MaskDirs[p] = fi.IsDir()
		return true
	})
}

// isMask returns whether a path is a placeholder: a mask of plan or of a
// run still going on.
func (m *Manager) isMask(plan Plan) func(string) bool {
	return func(p string) bool {
		if slices.Contains(plan.Masks, p) {
			return true
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.masks[p] > 0
	}
}

// Session is the sandbox of one session's commands: a manager and a
// policy.
type Session struct {
	m      *Manager
	policy Policy
}

// Session returns the sandbox for commands under p. The temp dir is
// created (0700) if missing.
func (m *Manager) Session(p Policy) (*Session, error) {
	if p.TmpDir != "" {
		if err := os.MkdirAll(p.TmpDir, 0o700); err != nil {
			return nil, fmt.Errorf("session temp dir: %w", err)
		}
	}
	if p.Workspace != "" {
		if real, err := filepath.EvalSymlinks(p.Workspace); err == nil {
			p.Workspace = real
		}
	}
	p.WritableRoots = slices.Clone(p.WritableRoots)
	return &Session{m: m, policy: p}, nil
}

// Policy returns the session's policy.
func (s *Session) Policy() Policy { return s.policy }

// Status returns the manager's status.
func (s *Session) Status() Status { return s.m.Status() }

// Enforced reports whether this session's commands run confined: a
// backend is in force and the mode is not off.
func (s *Session) Enforced() bool {
	return s != nil && s.policy.Mode != ModeOff && s.m.Status().Enforced
}

// Unconfined returns the session with the sandbox off, for a command the
// user approved to run outside it: the limits, the temp dir and the
// process lifecycle stay.
func (s *Session) Unconfined() *Session {
	c := *s
	c.policy.Mode = ModeOff
	return &c
}

// Command is what to run: argv in Dir with Env.
type Command struct {
	Argv []string
	Dir  string
	Env  []string
}

// Launch is a command ready to start: run Path with Args (Args[0] is the
// program name) and Env, passing ExtraFiles as fd 3 onwards. Call Started
// with the pid once it has started, and Done once it has ended.
type Launch struct {
	Path       string
	Args       []string
	Env        []string
	ExtraFiles []*os.File
	// Backend is the backend the command runs under ("none" for none).
	Backend string

	started func(pid int) error
	done    []func()
}

// Started lets the started command go on (after putting it into its
// cgroup, where there is one).
func (l *Launch) Started(pid int) error {
	if l.started == nil {
		return nil
	}
	return l.started(pid)
}

// Done cleans up after the command: cgroup, mount points, files.
func (l *Launch) Done() {
	for i := len(l.done) - 1; i >= 0; i-- {
		l.done[i]()
	}
	l.done = nil
}

// SetupFailure tells whether a command's output and exit code show that
// its sandbox failed to set up (the command itself did not run), and if so
// returns the *SetupError.
func (l *Launch) SetupFailure(output string, exitCode int) error {
	out := strings.TrimSpace(output)
	switch {
	case exitCode == helperExit && strings.HasPrefix(out, helperPrefix):
		return &SetupError{Backend: l.Backend, Reason: firstLine(strings.TrimPrefix(out, helperPrefix))}
	case l.Backend == BackendBwrap && exitCode == 1 && strings.HasPrefix(out, "bwrap: "):
		return &SetupError{Backend: l.Backend, Reason: firstLine(out)}
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// setEnv sets name=value in env.
func setEnv(env []string, name, value string) []string {
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
	return append(env, name+"="+value)
}

// helperPath returns the helper binary.
func (m *Manager) helperPath() (string, error) {
	if m.opts.HelperPath != "" {
		return m.opts.HelperPath, nil
	}
	p, err := os.Executable()
	if err != nil {
		return "", errors.New("cannot find the mx-claw binary to run the sandbox helper")
	}
	return p, nil
}

// Notice returns, the first time in this process, the warning to show
// when this session's commands run without a sandbox; "" otherwise.
func (s *Session) Notice() string {
	if s.policy.Mode == ModeOff {
		return ""
	}
	return s.m.Notice()
}
