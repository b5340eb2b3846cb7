package main_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
)

// measured is a finished mx-claw process and its peak memory.
type measured struct {
	result
	maxRSS int64 // bytes
}

// runMeasured runs mx-claw like run and reports its peak resident memory.
func (e *env) runMeasured(stdin string, args ...string) measured {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := e.command(ctx, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	peak, err := runPeak(cmd)
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("run mx-claw %v: %v", args, err)
	}
	if peak == 0 {
		e.t.Skip("cannot measure memory: no /proc/PID/status with VmHWM on this system")
	}
	return measured{result{out.String(), errb.String(), code}, peak}
}

// runPeak runs cmd and returns its peak resident memory (VmHWM), sampled
// from /proc while it runs: the high-water mark is the process's own, not
// the rusage maximum, which counts the parent's memory at fork.
func runPeak(cmd *exec.Cmd) (int64, error) {
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	done := make(chan struct{})
	peakc := make(chan int64, 1)
	go func() {
		var peak int64
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, vmHWM(cmd.Process.Pid))
			select {
			case <-done:
				peakc <- peak
				return
			case <-tick.C:
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	return <-peakc, err
}

// vmHWM reads a process's peak resident memory in bytes, or 0.
func vmHWM(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(rest), "%d", &kb)
			return kb << 10
		}
	}
	return 0
}

// dbSize is the size of the home's database with its WAL.
func (e *env) dbSize() int64 {
	var n int64
	for _, f := range []string{"mx-claw.db", "mx-claw.db-wal"} {
		if fi, err := os.Stat(filepath.Join(e.home, f)); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// TestHugeAnswerIsCappedAndMemoryStaysFlat: a 100 MB answer is cut off at
// the answer cap: the turn fails with a clear error, nothing of the answer
// is stored, the process's peak memory stays near that of a short answer,
// and the session goes on.
func TestHugeAnswerIsCappedAndMemoryStaysFlat(t *testing.T) {
	t.Parallel()
	const size = 100 << 20
	e := newEnv(t, llmtest.Text("a short answer"), llmtest.Reply{Text: strings.Repeat("x", size), Pieces: size / (64 << 10)},
		llmtest.Text("after the long one"))
	small := e.runMeasured("", "run", "--json", "say something short")
	if small.code != 0 {
		t.Fatalf("small answer: exit %d: %s", small.code, small.stderr)
	}
	db0 := e.dbSize()
	big := e.runMeasured("", "run", "--continue", "say something long")
	grew := e.dbSize() - db0
	t.Logf("peak RSS: short answer %d MiB, 100 MiB answer %d MiB; database grew %d KiB; stdout %d KiB",
		small.maxRSS>>20, big.maxRSS>>20, grew>>10, len(big.stdout)>>10)
	if big.code != 1 || !strings.Contains(big.stderr, "answer went past the limit of 4 MiB") {
		t.Errorf("exit %d, stderr %q; want 1 and the limit named", big.code, big.stderr)
	}
	if big.maxRSS > small.maxRSS*3/2+32<<20 {
		t.Errorf("peak RSS %d MiB for a 100 MiB answer, %d MiB for a short one", big.maxRSS>>20, small.maxRSS>>20)
	}
	if grew > 1<<20 || len(big.stdout) > 5<<20 {
		t.Errorf("the database grew by %d bytes and stdout got %d bytes", grew, len(big.stdout))
	}
	after := e.run("", "run", "--continue", "--json", "again")
	if after.code != 0 || !strings.Contains(after.stdout, "after the long one") {
		t.Fatalf("next turn: exit %d: %s", after.code, after.stderr)
	}
	d := e.show(sessionOf(t, after.events(t)))
	for _, m := range d.Messages {
		if len(m.Content) > 1<<20 {
			t.Errorf("a %d-byte %s message was stored", len(m.Content), m.Role)
		}
	}
}

// TestHugeToolArgumentRefused: a call with 50 MB of arguments is refused
// with a result the model reads, nothing runs, memory stays flat, and the
// turn goes on.
func TestHugeToolArgumentRefused(t *testing.T) {
	t.Parallel()
	const size = 50 << 20
	args := `{"path":"big.txt","content":"` + strings.Repeat("y", size) + `"}`
	e := newEnv(t, llmtest.Text("warm-up"),
		llmtest.Reply{Text: "writing", Pieces: size / (64 << 10), ToolCalls: []llmtest.ToolCall{
			{ID: "big", Name: "write_file", Arguments: args},
			{ID: "small", Name: "write_file", Arguments: `{"path":"small.txt","content":"fine"}`},
		}},
		llmtest.Text("understood"))
	small := e.runMeasured("", "run", "--json", "warm up")
	if small.code != 0 {
		t.Fatalf("exit %d: %s", small.code, small.stderr)
	}
	db0 := e.dbSize()
	r := e.runMeasured("", "run", "--continue", "--permission-mode", "acceptEdits", "write a big file")
	grew := e.dbSize() - db0
	t.Logf("peak RSS: short answer %d MiB, 50 MiB argument %d MiB; database grew %d KiB", small.maxRSS>>20, r.maxRSS>>20, grew>>10)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	reqs := e.srv.ChatRequests()
	res := toolResults(reqs[len(reqs)-1])
	if !strings.HasPrefix(res["big"], "Tool failed: the arguments of this call were 50 MiB, more than the 1 MiB") {
		t.Errorf("result of the big call: %q", res["big"])
	}
	if !strings.Contains(r.stderr, "more than the 1 MiB") {
		t.Errorf("the user is not told: %q", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "big.txt")); err == nil {
		t.Error("the refused call ran")
	}
	if got, err := os.ReadFile(filepath.Join(e.ws, "small.txt")); err != nil || string(got) != "fine" {
		t.Errorf("the other call of the answer: %q, %v", got, err)
	}
	if r.maxRSS > small.maxRSS*3/2+32<<20 || grew > 1<<20 {
		t.Errorf("peak RSS %d MiB (short answer %d MiB), database grew %d bytes", r.maxRSS>>20, small.maxRSS>>20, grew)
	}
}

// countingWriter keeps the first max bytes written to it and counts all.
type countingWriter struct {
	max  int
	head bytes.Buffer
	n    int64
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	if room := w.max - w.head.Len(); room > 0 {
		w.head.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// TestJSONOutputOfHugeCommandIsCapped: with --json, 1 GB of command output
// does not reach stdout: tool.output stops at its cap per call, the model
// gets head and tail, memory stays flat, and the whole output (up to the
// file's cap) stays readable with read_tool_output.
func TestJSONOutputOfHugeCommandIsCapped(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "flood", Name: "run_command", Arguments: `{"command":"yes line | head -c 1000000000"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "page", Name: "read_tool_output", Arguments: `{"call_id":"flood","offset":1000000,"limit":2}`}}},
		llmtest.Text("done"))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := e.command(ctx, "run", "--json", "--yolo", "flood")
	out := &countingWriter{max: 8 << 20}
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &errb
	start := time.Now()
	peak, err := runPeak(cmd)
	if err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	t.Logf("1 GB of output: stdout %d KiB, peak RSS %d MiB, %v", out.n>>10, peak>>20, time.Since(start).Round(time.Millisecond))
	if out.n > 2<<20 {
		t.Errorf("stdout got %d bytes", out.n)
	}
	if peak > 100<<20 {
		t.Errorf("peak RSS %d MiB", peak>>20)
	}
	reqs := e.srv.ChatRequests()
	flood := toolResults(reqs[1])["flood"]
	if len(flood) > 64<<10 || !strings.Contains(flood, "omitted") || !strings.Contains(flood, `the first 67108864 of its 1000000000 bytes are kept`) ||
		!strings.Contains(flood, `read_tool_output call_id="flood"`) {
		t.Errorf("the model's result (%d bytes) lacks the cut or the way to the whole output:\n%.200s", len(flood), flood[max(0, len(flood)-400):])
	}
	if page := toolResults(reqs[2])["page"]; !strings.Contains(page, "1000000\tline\n1000001\tline") {
		t.Errorf("read_tool_output of the kept output: %q", page)
	}
}

// TestLongRetryAfterSaysHowLong: a 429 asking for a wait longer than
// mx-claw waits on its own fails the turn at once, and the message says how
// long the provider wants.
func TestLongRetryAfterSaysHowLong(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Reply{Status: 429, RetryAfter: "5400", Body: `{"error":{"message":"Rate limit reached for requests","type":"requests"}}`})
	start := time.Now()
	r := e.run("", "run", "hello")
	if r.code != 1 || !strings.Contains(r.stderr, "Rate limit reached") || !strings.Contains(r.stderr, "wait 1h30m before the next request") {
		t.Errorf("exit %d, stderr %q; want 1 and the wait named", r.code, r.stderr)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}
}
