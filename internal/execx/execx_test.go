package execx

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/testutil"
)

func TestRunExitAndInterleavedOutput(t *testing.T) {
	t.Parallel()
	var streamed strings.Builder
	res, err := Run(context.Background(), Command{
		Script: "echo out; echo err >&2; exit 3",
		Dir:    t.TempDir(),
		Env:    Env(os.Environ(), DefaultEnvAllow),
		Output: func(b []byte) { streamed.Write(b) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || res.Output != "out\nerr\n" || streamed.String() != res.Output {
		t.Errorf("got %+v, streamed %q", res, streamed.String())
	}
}

func TestRunTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	start := time.Now()
	res, err := Run(context.Background(), Command{
		Script:  "sleep 30 & echo $! > child.pid; wait",
		Dir:     dir,
		Env:     Env(os.Environ(), DefaultEnvAllow),
		Timeout: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || time.Since(start) > 10*time.Second {
		t.Errorf("got %+v after %v, want a timeout", res, time.Since(start))
	}
	assertGone(t, pidFile)
}

func TestRunCancelKillsGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(300 * time.Millisecond); cancel() }()
	_, err := Run(ctx, Command{Script: "sleep 30 & echo $! > child.pid; wait", Dir: dir, Env: Env(os.Environ(), DefaultEnvAllow)})
	if err != context.Canceled {
		t.Errorf("err %v, want context.Canceled", err)
	}
	assertGone(t, filepath.Join(dir, "child.pid"))
}

func TestRunBackgroundChildDoesNotOutliveCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	start := time.Now()
	res, err := Run(context.Background(), Command{Script: "sleep 30 & echo $! > child.pid; echo started", Dir: dir, Env: Env(os.Environ(), DefaultEnvAllow)})
	if err != nil || res.ExitCode != 0 || time.Since(start) > 10*time.Second {
		t.Fatalf("got %+v, %v after %v", res, err, time.Since(start))
	}
	assertGone(t, filepath.Join(dir, "child.pid"))
}

func assertGone(t *testing.T, pidFile string) { testutil.AssertGone(t, pidFile) }

func TestEnvAllowListDropsSecrets(t *testing.T) {
	t.Parallel()
	environ := []string{"PATH=/bin", "HOME=/h", "OPENAI_API_KEY=sk-1", "MX_CLAW_API_KEY_X=k", "GITHUB_TOKEN=t", "RANDOM_VAR=x", "MY_SECRET=s"}
	got := strings.Join(Env(environ, append(DefaultEnvAllow, "MY_SECRET", "GITHUB_TOKEN")), " ")
	for _, bad := range []string{"sk-1", "MX_CLAW", "GITHUB_TOKEN", "RANDOM_VAR", "MY_SECRET"} {
		if strings.Contains(got, bad) {
			t.Errorf("env %q contains %s", got, bad)
		}
	}
	for _, want := range []string{"PATH=/bin", "HOME=/h", "PAGER=cat"} {
		if !strings.Contains(got, want) {
			t.Errorf("env %q lacks %s", got, want)
		}
	}
}

func TestCaptureHeadTail(t *testing.T) {
	t.Parallel()
	c := newCapture(20)
	for i := 0; i < 10; i++ {
		c.Write([]byte("0123456789"))
	}
	out, total, trunc := c.Result()
	if total != 100 || !trunc || !strings.HasPrefix(out, "0123456789") || !strings.HasSuffix(out, "0123456789") || !strings.Contains(out, "[80 bytes of output omitted]") {
		t.Errorf("got %q %d %v", out, total, trunc)
	}
	c = newCapture(20)
	c.Write([]byte("short"))
	if out, _, trunc := c.Result(); out != "short" || trunc {
		t.Errorf("got %q %v", out, trunc)
	}
}
