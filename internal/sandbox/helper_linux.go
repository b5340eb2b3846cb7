package sandbox

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// runHelper confines this process as spec says and execs the command. It
// returns only on failure.
func runHelper(s helperSpec) error {
	// Landlock, no_new_privs and seccomp are set on this thread, and the
	// exec must happen on it.
	runtime.LockOSThread()
	if s.Wait {
		if err := waitGo(); err != nil {
			return err
		}
	}
	switch s.Backend {
	case "bwrap":
		return execBwrap(s)
	case "landlock":
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("set no_new_privs: %v", err)
		}
		if err := applyLandlock(s); err != nil {
			return err
		}
		if s.Seccomp {
			f, err := seccompFilter(s.Net)
			if err != nil {
				return err
			}
			if err := installSeccomp(f); err != nil {
				return err
			}
		}
	case "bridge":
		return runBridge(s)
	case "none":
	default:
		return fmt.Errorf("unknown backend %q", s.Backend)
	}
	return execArgv(s, s.Argv)
}

// execArgv sets the limits and replaces this process with argv, found on
// PATH. The address-space limit comes last, right before the exec, with
// everything the exec needs allocated already: under it the Go runtime,
// which reserved much address space, may not be able to allocate again.
func execArgv(s helperSpec, argv []string) error {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("find %s: %v", argv[0], err)
	}
	if err := setLimits(s.Limits, s.NprocRlimit, false); err != nil {
		return err
	}
	pathp, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	argvp, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return err
	}
	envp, err := syscall.SlicePtrFromStrings(os.Environ())
	if err != nil {
		return err
	}
	// The command dies with mx-claw. mx-claw asked for that when it
	// started the helper, but the setting belongs to a thread, and this
	// may not be the one that was started: set it again on the thread
	// that execs, and give up if mx-claw is already gone.
	ppid := os.Getppid()
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("set the parent-death signal: %v", err)
	}
	if ppid == 1 {
		return errors.New("mx-claw has exited")
	}
	as := uint64(s.Limits.orDefault().AddressSpaceMB) << 20
	var cur unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_AS, &cur) == nil && cur.Max < as {
		as = cur.Max
	}
	lim := unix.Rlimit{Cur: as, Max: as}
	if !s.NoAddressLimit {
		if _, _, e := unix.RawSyscall(unix.SYS_SETRLIMIT, unix.RLIMIT_AS, uintptr(unsafe.Pointer(&lim)), 0); e != 0 {
			return fmt.Errorf("set the address space limit: %v", e)
		}
	}
	_, _, e := unix.RawSyscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(pathp)),
		uintptr(unsafe.Pointer(&argvp[0])), uintptr(unsafe.Pointer(&envp[0])))
	return fmt.Errorf("exec %s: %v", argv[0], e)
}

// execBwrap execs bubblewrap with the seccomp filter on a pipe it reads
// (bwrap --seccomp FD installs it just before running the command).
func execBwrap(s helperSpec) error {
	argv := s.Argv
	if s.Seccomp {
		f, err := seccompFilter(s.Net)
		if err != nil {
			return err
		}
		var p [2]int
		if err := unix.Pipe2(p[:], 0); err != nil {
			return fmt.Errorf("seccomp pipe: %v", err)
		}
		if _, err := unix.Write(p[1], seccompBytes(f)); err != nil {
			return fmt.Errorf("seccomp pipe: %v", err)
		}
		unix.Close(p[1])
		argv = append([]string{argv[0], "--seccomp", strconv.Itoa(p[0])}, argv[1:]...)
	}
	return execArgv(s, argv)
}

// applyLandlock restricts this thread: read and execute everywhere, write
// only the grants, TCP not at all (or only to the proxy's port) when the
// network is off. It refuses to go on when the kernel enforces nothing.
func applyLandlock(s helperSpec) error {
	abi, err := llsyscall.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return errors.New("this kernel does not enforce Landlock")
	}
	if s.ProxyPort > 0 && abi < 4 {
		return fmt.Errorf("landlock ABI %d cannot limit TCP to the proxy (allowedHosts needs ABI 4)", abi)
	}
	cfg := landlock.V11.BestEffort()
	if !s.NetOff && s.ProxyPort == 0 {
		cfg.HandledAccessNet = 0
	}
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full", "/dev/tty").IgnoreIfMissing(),
	}
	for _, g := range s.Grants {
		if g.Dir {
			rules = append(rules, landlock.RWDirs(g.Path).WithRefer().IgnoreIfMissing())
		} else {
			rules = append(rules, landlock.RWFiles(g.Path).IgnoreIfMissing())
		}
	}
	if s.ProxyPort > 0 {
		rules = append(rules, landlock.ConnectTCP(uint16(s.ProxyPort)))
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("landlock: %v", err)
	}
	if fd < 0 {
		return errors.New("this kernel does not enforce Landlock")
	}
	defer unix.Close(fd)
	if err := llsyscall.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock: %v", err)
	}
	return nil
}

// runBridge runs inside a bwrap sandbox without a network: it listens on
// 127.0.0.1:BridgePort in the sandbox's own network namespace, forwards
// each connection to the proxy's Unix socket outside, and runs the command
// meanwhile, exiting with its status.
func runBridge(s helperSpec) error {
	ln, err := net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(s.BridgePort))
	if err != nil {
		return fmt.Errorf("proxy bridge: %v", err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				u, err := net.Dial("unix", s.BridgeSocket)
				if err != nil {
					return
				}
				defer u.Close()
				go func() { io.Copy(u, c); u.(*net.UnixConn).CloseWrite() }()
				io.Copy(c, u)
			}()
		}
	}()
	// The command runs through the helper once more, which sets the
	// limits (the address space one would not leave this Go process room
	// to run) and execs it.
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("proxy bridge: %v", err)
	}
	child := helperSpec{Backend: "none", Argv: s.Argv, Limits: s.Limits}
	cmd := exec.Command(self, HelperArg, child.encode())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %v", s.Argv[0], err)
	}
	runtime.UnlockOSThread()
	err = cmd.Wait()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	}
	os.Exit(code)
	return nil
}
