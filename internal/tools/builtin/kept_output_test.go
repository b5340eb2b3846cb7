package builtin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// TestRunCommandKeepsWholeOutput: a command whose output is cut for the
// model keeps all of it in the call's file, and read_tool_output pages
// through it by call id (and by the result's seq); a short output leaves
// no file.
func TestRunCommandKeepsWholeOutput(t *testing.T) {
	t.Parallel()
	env, _ := newEnv(t)
	env.Outputs = &tools.OutputFiles{Dir: filepath.Join(t.TempDir(), "outputs")}
	env.CallID = "call_long"
	out, err := run(t, NewRunCommand(), env, `{"command":"seq 1 200000"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "bytes of output omitted") || !strings.Contains(out, `read_tool_output call_id="call_long"`) {
		t.Fatalf("the cut result does not say where the whole output is:\n%s", out[len(out)-300:])
	}
	msgs := []protocol.Message{{Seq: 7, Role: protocol.RoleTool, ToolCallID: "call_long", ToolName: "run_command", Content: out}}
	env.History = func() ([]protocol.Message, error) { return msgs, nil }
	for _, args := range []string{`{"call_id":"call_long","offset":100000,"limit":2}`, `{"seq":7,"offset":100000,"limit":2}`} {
		got, err := run(t, NewReadToolOutput(), env, args)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got, "100000\t100000\n100001\t100001") || !strings.Contains(got, "of 200000") {
			t.Errorf("read_tool_output %s:\n%s", args, got)
		}
	}

	env.CallID = "call_short"
	if _, err := run(t, NewRunCommand(), env, `{"command":"echo hi"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Outputs.Open("call_short"); !os.IsNotExist(err) {
		t.Errorf("a whole output left a file: %v", err)
	}
}

// TestKeptOutputCapsLinesAndFile: a kept output without line ends is read
// as cut lines, and the file stops at its cap.
func TestKeptOutputCapsLinesAndFile(t *testing.T) {
	t.Parallel()
	env, _ := newEnv(t)
	env.Outputs = &tools.OutputFiles{Dir: t.TempDir(), Max: 1 << 20}
	env.CallID = "zeros"
	out, err := run(t, NewRunCommand(), env, `{"command":"head -c 3000000 /dev/zero | tr '\\0' z"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "the first 1048576 of its 3000000 bytes are kept") {
		t.Fatalf("result does not say the file was capped:\n%s", out[len(out)-200:])
	}
	env.History = func() ([]protocol.Message, error) {
		return []protocol.Message{{Seq: 1, Role: protocol.RoleTool, ToolCallID: "zeros", Content: out}}, nil
	}
	got, err := run(t, NewReadToolOutput(), env, `{"call_id":"zeros"}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > 4000 || !strings.Contains(got, fmt.Sprintf("[line cut: %d bytes]", 1<<20)) {
		t.Errorf("a line without end was not cut (%d bytes):\n%.300s", len(got), got)
	}
	if _, err := NewReadToolOutput().Run(t.Context(), env, []byte(`{}`)); err == nil {
		t.Error("read_tool_output without seq or call_id")
	}
}
