package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/execx"
	"github.com/mx-claw/mx-claw/internal/sandbox"
)

// backends returns a manager per real backend, skipping (with the reason)
// those this machine cannot run.
func backends(t *testing.T) map[string]*sandbox.Manager {
	t.Helper()
	out := map[string]*sandbox.Manager{}
	for _, b := range []string{sandbox.BackendBwrap, sandbox.BackendLandlock} {
		m := sandbox.NewManager(sandbox.Options{Backend: b})
		t.Cleanup(func() { m.Close() })
		if st := m.Status(); !st.Enforced {
			t.Logf("backend %s cannot run here: %s (%s)", b, st.Reason, strings.Join(st.Details, "; "))
			continue
		}
		out[b] = m
	}
	if len(out) == 0 {
		t.Skip("no sandbox backend runs on this machine")
	}
	return out
}

// fixture is a workspace with a git directory, a home dir and a sibling
// directory outside the workspace.
type fixture struct {
	root, ws, home, tmp string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{root: root, ws: filepath.Join(root, "ws"), home: filepath.Join(root, "home"), tmp: filepath.Join(root, "tmp")}
	for _, d := range []string{f.ws, f.home, f.ws + "/.git/hooks", f.ws + "/.git/objects", f.ws + "/src", f.ws + "/.claude"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{".git/config", ".git/index", ".mcp.json", "src/a.go"} {
		if err := os.WriteFile(filepath.Join(f.ws, p), []byte("orig\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f fixture) session(t *testing.T, m *sandbox.Manager, mutate func(*sandbox.Config)) *execx.Runner {
	t.Helper()
	cfg := sandbox.Resolve(nil, nil, "", "")
	if mutate != nil {
		mutate(&cfg)
	}
	s, err := m.Session(sandbox.Policy{Config: cfg, Workspace: f.ws, TmpDir: f.tmp})
	if err != nil {
		t.Fatal(err)
	}
	return &execx.Runner{Sandbox: s}
}

func (f fixture) run(t *testing.T, r *execx.Runner, script string) execx.Result {
	t.Helper()
	res, err := r.Run(context.Background(), execx.Command{Script: script, Dir: f.ws,
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + f.home}, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return res
}

// TestFileSystemTable runs the table against every backend: writes
// outside the workspace and to protected paths fail and leave nothing;
// ordinary writes inside succeed.
func TestFileSystemTable(t *testing.T) {
	for name, m := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			r := f.session(t, m, nil)
			denied := []struct{ script, path string }{
				{"echo x > $HOME/probe", filepath.Join(f.home, "probe")},
				{"touch /etc/probe-mx-claw", "/etc/probe-mx-claw"},
				{"echo x > ../outside", filepath.Join(f.root, "outside")},
				{"echo x > .git/config", ""},
				{"echo x > .git/hooks/pre-commit", filepath.Join(f.ws, ".git/hooks/pre-commit")},
				{"mkdir -p .mx-claw && echo x > .mx-claw/settings.json", filepath.Join(f.ws, ".mx-claw/settings.json")},
				{"echo x > .mcp.json", ""},
				{"echo x > .claude/settings.json", filepath.Join(f.ws, ".claude/settings.json")},
				{"echo x > .gitmodules", filepath.Join(f.ws, ".gitmodules")},
				{"rm -rf .git/hooks", ""},
			}
			for _, c := range denied {
				res := f.run(t, r, c.script)
				if res.ExitCode == 0 {
					t.Errorf("%q succeeded in the sandbox: %s", c.script, res.Output)
				}
				if c.path != "" {
					if _, err := os.Lstat(c.path); err == nil {
						t.Errorf("%q created %s", c.script, c.path)
					}
				}
			}
			for _, p := range []string{".git/config", ".mcp.json"} {
				if b, _ := os.ReadFile(filepath.Join(f.ws, p)); string(b) != "orig\n" {
					t.Errorf("%s changed to %q", p, b)
				}
			}
			if _, err := os.Stat(filepath.Join(f.ws, ".git/hooks")); err != nil {
				t.Errorf(".git/hooks removed: %v", err)
			}
			for _, script := range []string{"echo y > .git/index", "echo y > .git/objects/x", "echo y > src/a.go",
				"mkdir -p src/new && echo y > src/new/b.go", "echo y > $TMPDIR/t && cat $TMPDIR/t"} {
				if res := f.run(t, r, script); res.ExitCode != 0 {
					t.Errorf("%q failed in the sandbox: %s", script, res.Output)
				}
			}
			// Nothing the sandbox used as a mount point is left behind.
			for _, p := range []string{".mx-claw", ".gitmodules"} {
				if _, err := os.Lstat(filepath.Join(f.ws, p)); err == nil {
					t.Errorf("%s left in the workspace", p)
				}
			}
		})
	}
}

// TestProtectedSymlink: .mx-claw as a symlink to a decoy directory stays
// protected, and the link cannot be replaced.
func TestProtectedSymlink(t *testing.T) {
	for name, m := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			if err := os.Mkdir(filepath.Join(f.ws, "decoy"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("decoy", filepath.Join(f.ws, ".mx-claw")); err != nil {
				t.Fatal(err)
			}
			r := f.session(t, m, nil)
			for _, script := range []string{"echo x > .mx-claw/settings.json",
				"rm .mx-claw && mkdir .mx-claw && echo x > .mx-claw/settings.json",
				"echo x > decoy/settings.json"} {
				if res := f.run(t, r, script); res.ExitCode == 0 {
					t.Errorf("%q succeeded: %s", script, res.Output)
				}
			}
			if _, err := os.Stat(filepath.Join(f.ws, "decoy/settings.json")); err == nil {
				t.Error("decoy/settings.json written")
			}
			if fi, err := os.Lstat(filepath.Join(f.ws, ".mx-claw")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf(".mx-claw is no longer the symlink: %v", err)
			}
			if res := f.run(t, r, "echo y > src/a.go"); res.ExitCode != 0 {
				t.Errorf("an ordinary write failed: %s", res.Output)
			}
		})
	}
}

// listen starts a TCP listener on loopback counting its connections.
func listen(t *testing.T) (port int, conns *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	conns = &atomic.Int32{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, conns
}

// TestNetworkOff: with the network off every way out fails and the test's
// listener sees nothing.
func TestNetworkOff(t *testing.T) {
	for name, m := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			port, conns := listen(t)
			udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer udp.Close()
			udpPort := udp.LocalAddr().(*net.UDPAddr).Port
			var udpSeen atomic.Int32
			go func() {
				buf := make([]byte, 512)
				for {
					if _, _, err := udp.ReadFrom(buf); err != nil {
						return
					}
					udpSeen.Add(1)
				}
			}()
			r := f.session(t, m, nil)
			scripts := []string{
				fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d", port),
				"getent ahosts example.com",
			}
			if _, err := exec.LookPath("curl"); err == nil {
				scripts = append(scripts, fmt.Sprintf("curl -sS -m 5 http://127.0.0.1:%d/", port))
			} else {
				t.Log("curl not installed: its case skipped")
			}
			if _, err := exec.LookPath("wget"); err == nil {
				scripts = append(scripts, fmt.Sprintf("wget -q -t 1 -T 5 -O- http://127.0.0.1:%d/", port))
			} else {
				t.Log("wget not installed: its case skipped")
			}
			if _, err := exec.LookPath("nc"); err == nil {
				scripts = append(scripts, fmt.Sprintf("nc -z -w 5 127.0.0.1 %d", port))
			} else {
				t.Log("nc not installed: its case skipped")
			}
			if _, err := exec.LookPath("python3"); err == nil {
				scripts = append(scripts,
					fmt.Sprintf(`python3 -c 'import socket; socket.create_connection(("127.0.0.1", %d), 5)'`, port),
					fmt.Sprintf(`python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"q", ("127.0.0.1", %d))'`, udpPort))
			} else {
				t.Log("python3 not installed: its cases skipped")
			}
			for _, s := range scripts {
				if res := f.run(t, r, s); res.ExitCode == 0 {
					t.Errorf("%q reached the network: %s", s, res.Output)
				}
			}
			time.Sleep(100 * time.Millisecond)
			if n := conns.Load(); n != 0 {
				t.Errorf("the listener saw %d connections", n)
			}
			if n := udpSeen.Load(); n != 0 {
				t.Errorf("the UDP listener saw %d datagrams", n)
			}
			// Local Unix sockets still work.
			if res := f.run(t, r, "python3 -c 'import socket; a,b=socket.socketpair(); a.send(b\"x\"); print(b.recv(1))'"); res.ExitCode != 0 {
				t.Errorf("a Unix socket pair failed: %s", res.Output)
			}
		})
	}
}

// TestHardening: no new privileges; ptrace and io_uring are refused; a
// fork bomb and a 2 GiB allocation are stopped by the limits; the test
// process survives all of it.
func TestHardening(t *testing.T) {
	for name, m := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			r := f.session(t, m, func(c *sandbox.Config) {
				c.Limits = sandbox.Limits{CPUSeconds: 20, AddressSpaceMB: 1024, Processes: 64, FileSizeMB: 16}
			})
			if res := f.run(t, r, "grep NoNewPrivs /proc/self/status"); !strings.Contains(res.Output, "NoNewPrivs:\t1") {
				t.Errorf("NoNewPrivs not set: %s", res.Output)
			}
			if _, err := exec.LookPath("python3"); err != nil {
				t.Skip("python3 not installed: the syscall and allocation cases need it")
			}
			py := `python3 -c 'import ctypes, os; libc=ctypes.CDLL(None, use_errno=True); r=libc.syscall(%d, %s); print(r, os.strerror(ctypes.get_errno()))'`
			for _, c := range []struct{ name, args string }{
				{"ptrace", "101, 16, 1, 0, 0"},  // PTRACE_ATTACH to pid 1
				{"io_uring_setup", "425, 1, 0"}, // x86-64 numbers
			} {
				res := f.run(t, r, fmt.Sprintf(py, sysno(c.name), strings.SplitN(c.args, ", ", 2)[1]))
				if !strings.Contains(res.Output, "-1 Operation not permitted") {
					t.Errorf("%s was not refused with EPERM: %s", c.name, res.Output)
				}
			}
			res := f.run(t, r, `python3 -c 'b = bytearray(2 << 30); print("allocated")'`)
			if res.ExitCode == 0 || strings.Contains(res.Output, "allocated") {
				t.Errorf("a 2 GiB allocation was not stopped: %s", res.Output)
			}
			res = f.run(t, r, "head -c 32M /dev/zero > big; ls -l big")
			if fi, err := os.Stat(filepath.Join(f.ws, "big")); err == nil && fi.Size() > 16<<20 {
				t.Errorf("a 32 MiB file was written past the 16 MiB limit")
			}
			if st := m.Status(); strings.HasPrefix(st.Processes, "not enforced") {
				t.Logf("fork bomb case skipped: process limit %s", st.Processes)
				return
			}
			start := time.Now()
			res = f.run(t, r, `bomb() { bomb | bomb & }; bomb; sleep 2; echo survived`)
			t.Logf("fork bomb: exit %d after %s: %.300s", res.ExitCode, time.Since(start).Round(time.Millisecond), res.Output)
			if res.TimedOut {
				t.Errorf("the fork bomb ran until the timeout")
			}
			if !strings.Contains(res.Output, "Resource temporarily unavailable") {
				t.Errorf("the fork bomb was not stopped by the process limit: %.300s", res.Output)
			}
			if res := f.run(t, r, "echo alive"); !strings.Contains(res.Output, "alive") {
				t.Errorf("the next command failed: %s", res.Output)
			}
		})
	}
}

// sysno is the x86-64 (or arm64) number of a system call for the test.
func sysno(name string) int {
	arm := map[string]int{"ptrace": 117, "io_uring_setup": 425}
	amd := map[string]int{"ptrace": 101, "io_uring_setup": 425}
	if isARM64 {
		return arm[name]
	}
	return amd[name]
}

// TestBadBwrapPath: a forced bwrap that cannot run fails the command with a
// SetupError, and the command does not run at all.
func TestBadBwrapPath(t *testing.T) {
	m := sandbox.NewManager(sandbox.Options{Backend: sandbox.BackendBwrap, BwrapPath: "/nonexistent/bwrap"})
	defer m.Close()
	if st := m.Status(); st.Enforced || st.Backend != sandbox.BackendBwrap {
		t.Fatalf("status %+v: want bwrap, not enforced", st)
	}
	f := newFixture(t)
	r := f.session(t, m, nil)
	_, err := r.Run(context.Background(), execx.Command{Script: "echo ran > ran.txt", Dir: f.ws, Env: []string{"PATH=" + os.Getenv("PATH")}})
	var se *sandbox.SetupError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want a SetupError", err)
	}
	if !strings.Contains(err.Error(), "/nonexistent/bwrap") || !strings.Contains(err.Error(), "did not run") {
		t.Errorf("error does not say what failed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "ran.txt")); err == nil {
		t.Error("the command ran without its sandbox")
	}
}

// TestAllowedHosts: with allowedHosts the command reaches an allowed host
// through the proxy (plain HTTP and a CONNECT tunnel), and nothing else.
func TestAllowedHosts(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	for name, m := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				io.WriteString(w, "hello from the allowed host")
			}))
			defer srv.Close()
			port := srv.Listener.Addr().(*net.TCPAddr).Port
			r := f.session(t, m, func(c *sandbox.Config) { c.AllowedHosts = []string{"localhost"} })
			for _, script := range []string{
				fmt.Sprintf("curl -sS -m 10 http://localhost:%d/", port),
				fmt.Sprintf("curl -sS -m 10 --proxytunnel http://localhost:%d/", port),
			} {
				res := f.run(t, r, script)
				if res.ExitCode != 0 || !strings.Contains(res.Output, "hello from the allowed host") {
					t.Errorf("%q did not reach the allowed host: %s", script, res.Output)
				}
			}
			before := hits.Load()
			for _, script := range []string{
				fmt.Sprintf("curl -sS -f -m 10 http://127.0.0.1:%d/", port),
				fmt.Sprintf("curl -sS -m 10 --noproxy '*' http://localhost:%d/", port),
				fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d", port),
			} {
				if res := f.run(t, r, script); res.ExitCode == 0 {
					t.Errorf("%q got through: %s", script, res.Output)
				}
			}
			if hits.Load() != before {
				t.Errorf("the server saw %d requests it should not have", hits.Load()-before)
			}
		})
	}
}
