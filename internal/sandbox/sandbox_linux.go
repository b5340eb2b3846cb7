package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// probe finds the backend this machine runs.
func probe(o Options) Status {
	st := Status{Backend: BackendNone}
	bwrapPath, bwrapErr := o.BwrapPath, error(nil)
	if bwrapPath == "" {
		bwrapPath, bwrapErr = exec.LookPath("bwrap")
	}
	if bwrapErr == nil {
		bwrapErr = tryBwrap(bwrapPath)
	}
	if bwrapErr == nil {
		st.Details = append(st.Details, "bubblewrap: "+bwrapPath+" works")
	} else {
		st.Details = append(st.Details, "bubblewrap: "+bwrapErr.Error())
	}
	abi, err := llsyscall.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		st.Details = append(st.Details, "landlock: not enforced by this kernel")
		abi = 0
	} else {
		st.Details = append(st.Details, fmt.Sprintf("landlock: ABI %d", abi))
	}
	if _, _, err := auditArch(); err != nil {
		st.Details = append(st.Details, "seccomp: "+err.Error())
	}
	if base := pidsCgroupBase(); base != "" {
		removeStaleCgroups(base)
		st.Processes = "cgroup pids.max"
	} else if os.Getuid() == 0 {
		st.Processes = "not enforced (root is not bound by RLIMIT_NPROC and no pids cgroup can be created)"
	} else {
		st.Processes = "RLIMIT_NPROC"
	}
	switch o.Backend {
	case "", "auto":
		switch {
		case bwrapErr == nil:
			st.Backend, st.Enforced, st.Reason = BackendBwrap, true, "bubblewrap runs here"
		case abi >= 1:
			st.Backend, st.Enforced, st.Reason = BackendLandlock, true, "bubblewrap cannot run here ("+bwrapErr.Error()+"); Landlock and seccomp instead"
		default:
			st.Reason = "neither bubblewrap nor Landlock can run here"
		}
	case BackendBwrap:
		st.Backend, st.Enforced, st.Reason = BackendBwrap, bwrapErr == nil, "chosen"
		if bwrapErr != nil {
			st.Reason = "chosen, but it cannot run: " + bwrapErr.Error()
		}
	case BackendLandlock:
		st.Backend, st.Enforced, st.Reason = BackendLandlock, abi >= 1, "chosen"
		if abi < 1 {
			st.Reason = "chosen, but the kernel does not enforce Landlock"
		}
	case BackendNone:
		st.Reason = "chosen"
	default:
		st.Backend, st.Reason = o.Backend, "unknown backend "+strconv.Quote(o.Backend)
	}
	return st
}

// tryBwrap runs bubblewrap once with the namespaces a command gets.
func tryBwrap(path string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--new-session", "--die-with-parent", "--unshare-pid", "--unshare-net",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true").CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("%s does not run: %s", path, firstLine(msg))
	}
	return nil
}

// Prepare turns a command into what to start: the helper, which sets the
// limits and execs bwrap or applies Landlock and seccomp and execs the
// command.
func (s *Session) Prepare(c Command) (*Launch, error) {
	st := s.m.Status()
	pol := s.policy
	helper, err := s.m.helperPath()
	if err != nil {
		return nil, err
	}
	env := c.Env
	if pol.TmpDir != "" {
		env = setEnv(env, "TMPDIR", pol.TmpDir)
	}
	backend := st.Backend
	if pol.Mode == ModeOff || backend != BackendBwrap && backend != BackendLandlock {
		backend = BackendNone
	}
	l := &Launch{Backend: backend, Path: helper}
	spec := helperSpec{Backend: backend, Argv: c.Argv, Limits: pol.Limits, Seccomp: backend != BackendNone}
	if err := s.limitProcesses(l, &spec); err != nil {
		return nil, err
	}
	var proxy *Proxy
	if backend != BackendNone && !pol.Network && len(pol.AllowedHosts) > 0 {
		if proxy, err = s.m.proxy(pol.AllowedHosts); err != nil {
			l.Done()
			return nil, &SetupError{Backend: backend, Reason: err.Error()}
		}
		u := "http://127.0.0.1:" + strconv.Itoa(proxy.Port())
		for _, n := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"} {
			env = setEnv(env, n, u)
		}
		env = setEnv(setEnv(env, "NO_PROXY", ""), "no_proxy", "")
	}
	switch backend {
	case BackendBwrap:
		bwrapPath := s.m.opts.BwrapPath
		if bwrapPath == "" {
			if bwrapPath, err = exec.LookPath("bwrap"); err != nil {
				l.Done()
				return nil, &SetupError{Backend: backend, Reason: "bwrap is not on PATH"}
			}
		}
		plan := pol.Plan()
		argv, net := c.Argv, bwrapNetOff
		spec.Net = netUnixOnly
		switch {
		case pol.Network:
			net, spec.Net = bwrapNetOn, netAllow
		case proxy != nil:
			// Inside, the helper bridges 127.0.0.1:PORT to the proxy's
			// socket and runs the command.
			net, spec.Net = bwrapNetProxy, netStreamOnly
			bridge := helperSpec{Backend: "bridge", Argv: c.Argv, Limits: pol.Limits,
				BridgeSocket: proxy.Socket(), BridgePort: proxy.Port()}
			argv = []string{helper, HelperArg, bridge.encode()}
			spec.NoAddressLimit = true
		}
		s.m.adoptHeldMasks(&plan)
		l.done = append(l.done, s.m.holdMasks(plan.Masks))
		// git inside does not list the placeholders as untracked files.
		state, err := s.m.stateDir()
		if err != nil {
			l.Done()
			return nil, &SetupError{Backend: backend, Reason: err.Error()}
		}
		var gitDir string
		env, gitDir, err = hidePlaceholders(state, plan.Masks, s.m.isMask(plan), env)
		if err != nil {
			l.Done()
			return nil, &SetupError{Backend: backend, Reason: "cannot write the git excludes of the placeholders: " + err.Error()}
		}
		if gitDir != "" {
			plan.ReadOnly = append(plan.ReadOnly, gitDir)
			l.done = append(l.done, func() { os.RemoveAll(gitDir) })
		}
		spec.Argv = append([]string{bwrapPath}, bwrapArgs(plan, net, c.Dir, argv)...)
	case BackendLandlock:
		grants, ok := landlockGrants(pol.Plan())
		if !ok {
			l.Done()
			return nil, &SetupError{Backend: backend, Reason: fmt.Sprintf("the writable roots need more than %d Landlock rules", maxGrants)}
		}
		spec.Grants = grants
		switch {
		case pol.Network:
			spec.Net = netAllow
		case proxy != nil:
			spec.Net, spec.ProxyPort = netStreamOnly, proxy.Port()
		default:
			spec.Net, spec.NetOff = netUnixOnly, true
		}
	}
	l.Args = []string{helper, HelperArg, spec.encode()}
	l.Env = env
	return l, nil
}

// limitProcesses puts the command into a pids cgroup where one can be
// made (the helper waits on fd 3 until it is in), else asks the helper
// for RLIMIT_NPROC.
func (s *Session) limitProcesses(l *Launch, spec *helperSpec) error {
	limits := s.policy.Limits.orDefault()
	base := pidsCgroupBase()
	if base == "" {
		spec.NprocRlimit = os.Getuid() != 0
		return nil
	}
	cg, err := newPidsCgroup(base, limits.Processes)
	if err != nil {
		spec.NprocRlimit = os.Getuid() != 0
		return nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		cg.remove()
		return err
	}
	spec.Wait = true
	l.ExtraFiles = []*os.File{r}
	l.started = func(pid int) error {
		r.Close()
		defer w.Close()
		if err := cg.add(pid); err != nil {
			return &SetupError{Backend: l.Backend, Reason: "cannot limit processes: " + err.Error()}
		}
		_, err := w.Write([]byte{1})
		return err
	}
	l.done = append(l.done, func() { r.Close(); w.Close(); cg.remove() })
	return nil
}
