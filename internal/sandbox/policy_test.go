package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestHostAllowed(t *testing.T) {
	t.Parallel()
	pats := []string{"allowed.com", ".sub-only.org", "10.0.0.1"}
	for _, c := range []struct {
		host string
		want bool
	}{
		{"allowed.com", true},
		{"ALLOWED.com.", true},
		{"api.allowed.com", true},
		{"allowed.com.evil.net", false},
		{"evilallowed.com", false},
		{"allowed.com\x00.evil.net", false},
		{"allowed.com evil", false},
		{"a.sub-only.org", true},
		{"sub-only.org", false},
		{"10.0.0.1", true},
		{"x.10.0.0.1", false},
		{"", false},
	} {
		if got := HostAllowed(c.host, pats); got != c.want {
			t.Errorf("HostAllowed(%q) = %v, want %v", c.host, got, c.want)
		}
	}
}

func TestParseSettings(t *testing.T) {
	t.Parallel()
	good := `{"mode":"read-only","network":true,"writableRoots":["/opt/cache","~/go"],"allowedHosts":["proxy.golang.org"],"limits":{"cpuSeconds":30}}`
	s, err := ParseSettings("u.json", json.RawMessage(good))
	if err != nil {
		t.Fatal(err)
	}
	if s.Mode != ModeReadOnly || !*s.Network || len(s.WritableRoots) != 2 || s.Limits.CPUSeconds != 30 {
		t.Errorf("parsed %+v", s)
	}
	for _, bad := range []string{
		`{"mode":"yolo"}`, `{"nework":false}`, `{"writableRoots":["rel/dir"]}`,
		`{"allowedHosts":["evil.com/x"]}`, `{"allowedHosts":["a\u0000b"]}`, `{"limits":{"processes":-1}}`, `[]`,
	} {
		_, err := ParseSettings("p.json", json.RawMessage(bad))
		if !errors.Is(err, ErrInvalidSettings) || !strings.Contains(err.Error(), "p.json") {
			t.Errorf("%s: err = %v, want an invalid-settings error naming the file", bad, err)
		}
	}
}

func TestResolveProjectOnlyTightens(t *testing.T) {
	t.Parallel()
	on := true
	off := false
	user := &Settings{Mode: ModeWorkspaceWrite, Network: &off, AllowedHosts: []string{"a.com", "b.com"},
		WritableRoots: []string{"~/cache"}, Limits: &Limits{CPUSeconds: 100}, Origin: "user"}
	project := &Settings{Mode: ModeOff, Network: &on, AllowedHosts: []string{"b.com", "c.com"},
		WritableRoots: []string{"/etc"}, Limits: &Limits{CPUSeconds: 1000, Processes: 10}, Origin: "project"}
	c := Resolve(user, project, "", "/home/u")
	if c.Mode != ModeWorkspaceWrite || c.Network {
		t.Errorf("project loosened mode or network: %+v", c)
	}
	if !slices.Equal(c.AllowedHosts, []string{"b.com"}) {
		t.Errorf("allowed hosts %v, want [b.com]", c.AllowedHosts)
	}
	if !slices.Equal(c.WritableRoots, []string{"/home/u/cache"}) {
		t.Errorf("writable roots %v", c.WritableRoots)
	}
	if c.Limits.CPUSeconds != 100 || c.Limits.Processes != 10 {
		t.Errorf("limits %+v", c.Limits)
	}
	strict := Resolve(user, &Settings{Mode: ModeReadOnly, Origin: "project"}, "", "")
	if strict.Mode != ModeReadOnly || strict.ModeOrigin != "project" {
		t.Errorf("project could not tighten the mode: %+v", strict)
	}
	if d := Resolve(nil, nil, "", ""); d.Mode != ModeWorkspaceWrite || d.Network {
		t.Errorf("default %+v: want workspace-write, network off", d)
	}
	if f := Resolve(user, project, ModeOff, ""); f.Mode != ModeOff || f.ModeOrigin != "the --sandbox flag" {
		t.Errorf("flag did not win: %+v", f)
	}
}

// workspace makes a workspace with some protected paths present.
func workspace(t *testing.T) string {
	t.Helper()
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	for _, d := range []string{".git/hooks", "src"} {
		os.MkdirAll(filepath.Join(ws, d), 0o755)
	}
	os.WriteFile(filepath.Join(ws, ".git/config"), nil, 0o644)
	os.WriteFile(filepath.Join(ws, "README"), nil, 0o644)
	return ws
}

func TestBwrapArgs(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	pol := Policy{Config: Resolve(nil, nil, "", ""), Workspace: ws}
	args := strings.Join(bwrapArgs(pol.Plan(), bwrapNetOff, ws, []string{"bash", "-c", "true"}), " ")
	for _, want := range []string{
		"--new-session --die-with-parent --unshare-pid",
		"--unshare-net",
		"--ro-bind / / --dev /dev --proc /proc",
		"--bind " + ws + " " + ws,
		"--ro-bind " + ws + "/.git/config " + ws + "/.git/config",
		"--ro-bind " + ws + "/.git/hooks " + ws + "/.git/hooks",
		"--tmpfs " + ws + "/.mx-claw --remount-ro " + ws + "/.mx-claw",
		"--ro-bind /dev/null " + ws + "/.mcp.json",
		"--ro-bind /dev/null " + ws + "/.gitmodules",
		"--chdir " + ws + " -- bash -c true",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("bwrap args lack %q:\n%s", want, args)
		}
	}
	// The writable bind comes before the read-only re-binds inside it.
	if strings.Index(args, "--bind "+ws) > strings.Index(args, "--ro-bind "+ws+"/.git/config") {
		t.Errorf("read-only re-bind before the writable bind:\n%s", args)
	}
	on := strings.Join(bwrapArgs(pol.Plan(), bwrapNetOn, ws, []string{"true"}), " ")
	if strings.Contains(on, "--unshare-net") {
		t.Errorf("network on, but --unshare-net: %s", on)
	}
	ro := Policy{Config: Resolve(nil, nil, ModeReadOnly, ""), Workspace: ws}
	if a := strings.Join(bwrapArgs(ro.Plan(), bwrapNetOff, ws, nil), " "); strings.Contains(a, "--bind "+ws) {
		t.Errorf("read-only mode binds the workspace writable: %s", a)
	}
}

func TestLandlockGrantsSkipProtected(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	pol := Policy{Config: Resolve(nil, nil, "", ""), Workspace: ws}
	grants, ok := landlockGrants(pol.Plan())
	if !ok {
		t.Fatal("too many grants")
	}
	var got []string
	for _, g := range grants {
		got = append(got, strings.TrimPrefix(g.Path, ws))
	}
	if !slices.Contains(got, "/src") || !slices.Contains(got, "/README") {
		t.Errorf("ordinary entries not granted: %v", got)
	}
	for _, bad := range []string{"", "/.git", "/.git/config", "/.git/hooks"} {
		if slices.Contains(got, bad) {
			t.Errorf("%q granted: %v", bad, got)
		}
	}
}

func TestSeatbeltProfile(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	os.Mkdir(filepath.Join(ws, `we"ird`), 0o755)
	pol := Policy{Config: Resolve(nil, nil, "", ""), Workspace: ws, TmpDir: filepath.Join(ws, "src")}
	p := SeatbeltProfile(pol.Plan(), false, 0)
	for _, want := range []string{
		"(version 1)\n(deny default)",
		"(allow process-exec)",
		"(allow file-write*\n  (subpath " + sbplString(ws) + ")",
		"(deny file-write*",
		"(subpath " + sbplString(ws+"/.git/hooks") + ")",
		"(literal " + sbplString(ws+"/.mx-claw") + ")",
		"(allow network-outbound (remote unix-socket))",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("profile lacks %q:\n%s", want, p)
		}
	}
	if strings.Contains(p, "(allow network*)") {
		t.Error("network allowed with the network off")
	}
	if got := sbplString(`a"b\c`); got != `"a\"b\\c"` {
		t.Errorf("sbplString = %s", got)
	}
	if p := SeatbeltProfile(pol.Plan(), false, 3128); !strings.Contains(p, `(remote tcp "localhost:3128")`) {
		t.Errorf("proxy port not allowed:\n%s", p)
	}
	if p := SeatbeltProfile(pol.Plan(), true, 0); !strings.Contains(p, "(allow network*)") {
		t.Errorf("network on not allowed:\n%s", p)
	}
	// Parentheses balance: the profile parses as S-expressions.
	depth := 0
	inStr := false
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case !inStr && c == ';':
			for i < len(p) && p[i] != '\n' {
				i++
			}
		case !inStr && c == '(':
			depth++
		case !inStr && c == ')':
			depth--
		}
		if depth < 0 {
			t.Fatal("unbalanced parentheses")
		}
	}
	if depth != 0 || inStr {
		t.Errorf("unbalanced profile (depth %d, in string %v)", depth, inStr)
	}
}

// TestProxyRefuses: hosts off the list, a NUL byte and a suffix trick are
// refused with 403 before anything is dialled.
func TestProxyRefuses(t *testing.T) {
	t.Parallel()
	dialled := make(chan string, 10)
	p, err := startProxy([]string{"allowed.com"}, t.TempDir(),
		func(n, a string) (net.Conn, error) { dialled <- a; return nil, errors.New("no network in tests") })
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, target := range []string{"allowed.com.evil.net:443", "evil.net:443", "allowed.com\x00.evil.net:443", "127.0.0.1:22"} {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", p.Port()))
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if !strings.Contains(line, "400") && !strings.Contains(line, "403") {
			t.Errorf("CONNECT %q: %q, want 403 or 400", target, line)
		}
	}
	c, _ := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", p.Port()))
	fmt.Fprintf(c, "CONNECT api.allowed.com:443 HTTP/1.1\r\nHost: api.allowed.com:443\r\n\r\n")
	line, _ := bufio.NewReader(c).ReadString('\n')
	c.Close()
	if !strings.Contains(line, "502") {
		t.Errorf("allowed host: %q, want the dial attempted (502 here)", line)
	}
	close(dialled)
	var got []string
	for a := range dialled {
		got = append(got, a)
	}
	if !slices.Equal(got, []string{"api.allowed.com:443"}) {
		t.Errorf("dialled %v, want only api.allowed.com:443", got)
	}
}

// TestGitMaskKeepsGoAndGitWorking: an absent .git is masked by a file in a
// workspace outside any repository (Go's VCS stamping ignores a file) and
// by a directory inside one (git looks past it to the parent).
func TestGitMaskKeepsGoAndGitWorking(t *testing.T) {
	t.Parallel()
	root, _ := filepath.EvalSymlinks(t.TempDir())
	alone := filepath.Join(root, "alone")
	os.MkdirAll(alone, 0o755)
	repo := filepath.Join(root, "repo")
	sub := filepath.Join(repo, "sub")
	os.MkdirAll(filepath.Join(repo, ".git"), 0o755)
	os.MkdirAll(sub, 0o755)
	for _, c := range []struct {
		ws      string
		wantDir bool
	}{{alone, insideRepository(root)}, {sub, true}} {
		pl := Policy{Config: Resolve(nil, nil, "", ""), Workspace: c.ws}.Plan()
		dir, ok := pl.MaskDirs[filepath.Join(c.ws, ".git")]
		if !ok || dir != c.wantDir {
			t.Errorf("%s: .git masked (%v) as a directory: %v, want %v", c.ws, ok, dir, c.wantDir)
		}
	}
}
