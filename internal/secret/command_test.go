//go:build unix

package secret

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestCommandOutputForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, script, key, want string
	}{
		{"single value", `echo sk-single`, "provider:x", "sk-single"},
		{"single value with CRLF and blanks", `printf '\n  sk-crlf \r\n\n'`, "provider:x", "sk-crlf"},
		{"value with equals", `echo 'abc=='`, "provider:x", "abc=="},
		{"key=value lines", `printf 'provider:a=sk-a\nprovider:x=sk-x\nprovider:b=sk-b\n'`, "provider:x", "sk-x"},
		{"key=value for another key only", `echo provider:other=sk-o`, "provider:x", ""},
		{"lines without our key", `printf 'provider:a=1\nprovider:b=2\n'`, "provider:x", ""},
		{"helper sees the key", `[ "$MX_CLAW_SECRET_KEY" = provider:x ] && echo sk-by-key`, "provider:x", "sk-by-key"},
		{"failing helper", `echo sk-should-not-count; exit 1`, "provider:x", ""},
		{"empty output", `true`, "provider:x", ""},
		{"empty value for our key", `echo provider:x=`, "provider:x", ""},
		{"shell not found", `/does/not/exist`, "provider:x", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := &Command{Script: tt.script, Getenv: fakeEnv("PATH", os.Getenv("PATH"))}
			got, err := c.Get(context.Background(), tt.key)
			if tt.want == "" {
				if !errors.Is(err, ErrNotFound) || got != "" {
					t.Errorf("Get = %q, %v; want no value", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Get = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestCommandMinimalEnv proves the helper gets only the allowed variables
// and the key name: it writes its whole environment into a file.
func TestCommandMinimalEnv(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "env.txt")
	c := &Command{
		Script: "env > " + out + "; echo sk-from-helper",
		Getenv: fakeEnv(
			"PATH", os.Getenv("PATH"), "HOME", "/home/u", "USER", "u", "LOGNAME", "u",
			"TMPDIR", "/tmp", "LANG", "C.UTF-8", "LC_ALL", "C",
			"OPENAI_API_KEY", "sk-openai-must-not-pass", "MX_CLAW_API_KEY_X", "sk-x-must-not-pass",
			"MX_CLAW_SECRET_COMMAND", "recursion", "DBUS_SESSION_BUS_ADDRESS", "unix:path=/x", "FOO", "bar",
		),
	}
	if v, err := c.Get(context.Background(), "provider:x"); err != nil || v != "sk-from-helper" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		name, _, _ := strings.Cut(line, "=")
		switch name {
		case "PWD", "SHLVL", "_", "OLDPWD": // set by the shell itself
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	want := "HOME LANG LC_ALL LOGNAME MX_CLAW_SECRET_KEY PATH TMPDIR USER"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("helper environment has %s\nwant %s\n%s", got, want, data)
	}
	if !strings.Contains(string(data), "MX_CLAW_SECRET_KEY=provider:x\n") {
		t.Errorf("helper did not get MX_CLAW_SECRET_KEY=provider:x:\n%s", data)
	}
	if strings.Contains(string(data), "must-not-pass") {
		t.Error("a key variable reached the helper")
	}
}

// TestCommandTimeoutKillsGroup runs a helper that never finishes and has
// started a child of its own: Get gives up after the timeout with no value,
// and the whole process group is gone.
func TestCommandTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	if CommandTimeout != 3*time.Second {
		t.Errorf("CommandTimeout = %v, want 3s", CommandTimeout)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	c := &Command{
		Script:  "sleep 30 & echo $! > " + pidFile + "; wait; echo sk-late",
		Getenv:  fakeEnv("PATH", os.Getenv("PATH")),
		Timeout: 1500 * time.Millisecond,
	}
	start := time.Now()
	v, err := c.Get(context.Background(), "provider:x")
	if !errors.Is(err, ErrNotFound) || v != "" {
		t.Fatalf("Get = %q, %v; want no value", v, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Get took %v with a 1.5 s timeout", d)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	deadline := time.Now().Add(2 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the helper's child %d outlived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestCommandOutputCap(t *testing.T) {
	t.Parallel()
	if CommandMaxOutput != 1<<20 {
		t.Errorf("CommandMaxOutput = %d, want 1 MiB", CommandMaxOutput)
	}
	env := fakeEnv("PATH", os.Getenv("PATH"))
	// Just over 1 MiB of one line: no value (and no hang on a full pipe).
	big := &Command{Script: fmt.Sprintf("head -c %d /dev/zero | tr '\\0' a", (1<<20)+1), Getenv: env}
	if v, err := big.Get(context.Background(), "provider:x"); !errors.Is(err, ErrNotFound) || v != "" {
		t.Errorf("over the cap: %d bytes, %v; want no value", len(v), err)
	}
	// An endless helper is cut off as well.
	endless := &Command{Script: "yes sk", Getenv: env}
	if v, err := endless.Get(context.Background(), "provider:x"); !errors.Is(err, ErrNotFound) || v != "" {
		t.Errorf("endless output: %d bytes, %v; want no value", len(v), err)
	}
	// Just under the cap is read.
	fits := &Command{Script: fmt.Sprintf("head -c %d /dev/zero | tr '\\0' a", (1<<20)-1), Getenv: env}
	if v, err := fits.Get(context.Background(), "provider:x"); err != nil || len(v) != (1<<20)-1 {
		t.Errorf("under the cap: %d bytes, %v", len(v), err)
	}
}

// TestCommandStderrNeverEchoed runs Get in another process, so that what
// reaches that process's own stderr can be checked: the helper's stderr
// must not, whether it fails or succeeds.
func TestCommandStderrNeverEchoed(t *testing.T) {
	t.Parallel()
	for _, script := range []string{
		"echo HELPER-STDERR-sk-leak >&2; exit 1",
		"echo HELPER-STDERR-sk-leak >&2; echo sk-ok",
	} {
		cmd := helper("command", "HELPER_SCRIPT="+script)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("helper: %v\n%s", err, stderr.String())
		}
		if strings.Contains(stdout.String()+stderr.String(), "HELPER-STDERR") {
			t.Errorf("script %q: the helper's stderr was echoed:\nstdout %s\nstderr %s", script, stdout.String(), stderr.String())
		}
		if !strings.Contains(stdout.String(), "value=") {
			t.Errorf("helper process printed %q", stdout.String())
		}
	}
}
