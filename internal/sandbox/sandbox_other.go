//go:build !linux

package sandbox

import (
	"os"
	"runtime"
	"strconv"
)

// sandboxExec is macOS's sandbox-exec, by absolute path so that PATH
// cannot put another program in its place.
const sandboxExec = "/usr/bin/sandbox-exec"

// probe finds the backend this machine runs: Seatbelt on macOS, none
// elsewhere.
func probe(o Options) Status {
	st := Status{Backend: BackendNone, Processes: "RLIMIT_NPROC"}
	_, err := os.Stat(sandboxExec)
	have := runtime.GOOS == "darwin" && err == nil
	switch o.Backend {
	case "", "auto", BackendSeatbelt:
		if have {
			st.Backend, st.Enforced, st.Reason = BackendSeatbelt, true, "sandbox-exec runs here"
		} else if o.Backend == BackendSeatbelt {
			st.Backend, st.Reason = BackendSeatbelt, "chosen, but "+sandboxExec+" is missing"
		} else {
			st.Reason = "no sandbox backend for " + runtime.GOOS
		}
	case BackendNone:
		st.Reason = "chosen"
	default:
		st.Backend, st.Reason = o.Backend, "unknown backend "+strconv.Quote(o.Backend)+" on "+runtime.GOOS
	}
	return st
}

// Prepare turns a command into what to start: the helper, which sets the
// limits and execs sandbox-exec with the generated profile (or the
// command itself without a backend).
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
	if pol.Mode == ModeOff || backend != BackendSeatbelt {
		backend = BackendNone
	}
	spec := helperSpec{Backend: backend, Argv: c.Argv, Limits: pol.Limits, NprocRlimit: true}
	if backend == BackendSeatbelt {
		port := 0
		if !pol.Network && len(pol.AllowedHosts) > 0 {
			p, err := s.m.proxy(pol.AllowedHosts)
			if err != nil {
				return nil, &SetupError{Backend: backend, Reason: err.Error()}
			}
			port = p.Port()
			u := "http://127.0.0.1:" + strconv.Itoa(port)
			for _, n := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"} {
				env = setEnv(env, n, u)
			}
		}
		profile := SeatbeltProfile(pol.Plan(), pol.Network, port)
		spec.Argv = append([]string{sandboxExec, "-p", profile}, c.Argv...)
	}
	return &Launch{Backend: backend, Path: helper, Args: []string{helper, HelperArg, spec.encode()}, Env: env}, nil
}
