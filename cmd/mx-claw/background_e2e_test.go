package main_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
)

// groupMembers returns the live processes (not zombies) of process group
// pgid, from /proc.
func groupMembers(t *testing.T, pgid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc: process groups cannot be listed here")
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(data)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
			out = append(out, pid)
		}
	}
	return out
}

// waitGroupGone fails the test unless group pgid has no live process
// within a few seconds.
func waitGroupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		m := groupMembers(t, pgid)
		if len(m) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still has processes %v", pgid, m)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startedPID finds the pid in a background start's result.
func startedPID(t *testing.T, result string) int {
	t.Helper()
	m := regexp.MustCompile(`Started background process bg\d+ \(pid (\d+)\)`).FindStringSubmatch(result)
	if m == nil {
		t.Fatalf("no background start in %q", result)
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestBackgroundServer: the model starts an HTTP server in the background,
// fetches from it with a second command, reads the server's output and
// stops it.
func TestBackgroundServer(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"python3", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (make test-deps installs it)", tool)
		}
	}
	port := strconv.Itoa(freePort(t))
	e := newEnv(t,
		llmtest.Call("run_command", `{"command":"python3 -u -m http.server `+port+` --bind 127.0.0.1","background":true}`),
		llmtest.Call("process_output", `{"id":"bg1","wait_for":"Serving HTTP","timeout":30}`),
		llmtest.Call("run_command", `{"command":"curl -sS http://127.0.0.1:`+port+`/hello.txt"}`),
		llmtest.Call("process_output", `{"id":"bg1","wait_for":"GET /hello.txt","timeout":10}`),
		llmtest.Call("process_kill", `{"id":"bg1"}`),
		llmtest.Text("The server answered and is stopped."),
	)
	e.writeWS("hello.txt", "hello from the workspace\n")
	// Commands share the machine's network only when the sandbox lets
	// them (by default each runs with the network off).
	e.writeHome("settings.json", `{"sandbox":{"network":true}}`)
	r := e.run("", "run", "--json", "--yolo", "--max-iterations", "10", "serve the workspace and fetch hello.txt")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.ChatRequests()
	results := toolResults(reqs[len(reqs)-1])
	want := map[string]string{
		"call_1": "Started background process bg1",
		"call_2": "Serving HTTP on 127.0.0.1 port " + port,
		"call_3": "hello from the workspace",
		"call_4": `"GET /hello.txt HTTP/1.1" 200`,
		"call_5": "has ended",
	}
	for id, w := range want {
		if !strings.Contains(results[id], w) {
			t.Errorf("result of %s lacks %q:\n%s", id, w, results[id])
		}
	}
	waitGroupGone(t, startedPID(t, results["call_1"]))
}

// TestBackgroundDiesWithSession: a background process the model never
// stops (with a child of its own) is gone when mx-claw exits.
func TestBackgroundDiesWithSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Call("run_command", `{"command":"sleep 300 & sleep 300","background":true}`),
		llmtest.Text("Started."),
	)
	r := e.run("", "run", "--json", "--yolo", "start a sleeper")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.ChatRequests()
	waitGroupGone(t, startedPID(t, toolResults(reqs[len(reqs)-1])["call_1"]))
	if entries, _ := os.ReadDir(filepath.Join(e.home, "run", "groups")); len(entries) != 0 {
		t.Errorf("records left after a clean exit: %v", entries)
	}
}

// TestBackgroundReapedAfterCrash: no background process outlives a
// SIGKILL of mx-claw and a restart. Without a sandbox the processes the
// command started survive the kill (only the group's leader dies with
// mx-claw) and the next mx-claw kills them, at its start; inside the
// sandbox they die with it.
func TestBackgroundReapedAfterCrash(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		args    []string
		survive bool // the processes outlive mx-claw until the restart
	}{
		{"no sandbox", []string{"--sandbox", "off"}, true},
		{"sandbox", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t,
				llmtest.Call("run_command", `{"command":"sleep 300 & sleep 300","background":true}`),
				llmtest.Reply{Hang: true, Text: "thinking..."},
			)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := e.command(ctx, append([]string{"run", "--json", "--yolo"}, append(tt.args, "start a sleeper")...)...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			// The record of the group appears once the process runs.
			dir := filepath.Join(e.home, "run", "groups")
			var pgid int
			deadline := time.Now().Add(30 * time.Second)
			for pgid == 0 {
				entries, _ := os.ReadDir(dir)
				for _, en := range entries {
					if owner, g, ok := strings.Cut(en.Name(), "-"); ok && owner == strconv.Itoa(cmd.Process.Pid) {
						pgid, _ = strconv.Atoi(g)
					}
				}
				if time.Now().After(deadline) {
					t.Fatal("no background process was recorded")
				}
				time.Sleep(20 * time.Millisecond)
			}
			for len(groupMembers(t, pgid)) < 2 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond) // the sleepers are starting
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			if tt.survive {
				time.Sleep(200 * time.Millisecond)
				if len(groupMembers(t, pgid)) == 0 {
					// Seen once under a heavily loaded machine; what must
					// hold is below: nothing runs after the restart.
					t.Log("the background processes died with mx-claw already; the reap had nothing to do")
				}
			}
			// The restart: the next mx-claw session reaps before anything else.
			e.srv.Enqueue(llmtest.Text("hello again"))
			r := e.run("", append([]string{"run"}, append(tt.args, "hello")...)...)
			if r.code != 0 {
				t.Fatalf("the next run: exit %d: %s", r.code, r.stderr)
			}
			waitGroupGone(t, pgid)
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("records left after the reap: %v", entries)
			}
		})
	}
}
