package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
)

// testNodeDir is where `make test-deps` installs the npm packages the tests
// use (MX_CLAW_TEST_NODE overrides it, as in the Makefile).
func testNodeDir() string {
	if d := os.Getenv("MX_CLAW_TEST_NODE"); d != "" {
		return d
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(cache, "mx-claw-test", "node")
}

// acpSDK returns node and the npm prefix holding the official ACP SDK, or
// skips the test saying what is missing.
func acpSDK(t *testing.T) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; the ACP client test needs Node.js (make test-deps installs the SDK with npm)")
	}
	dir = testNodeDir()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk", "package.json")); err != nil {
		t.Skipf("@agentclientprotocol/sdk is not installed under %s; run `make test-deps`", dir)
	}
	return node, dir
}

// TestACPOfficialClient drives `mx-claw acp` with the official TypeScript
// ACP client (testdata/acp/client.mjs): initialize, a new session, a prompt
// whose edit needs permission (granted) and comes back as a diff, reads and
// writes through the client's buffers, a second prompt cancelled while it
// streams, and the session loaded in a new process.
func TestACPOfficialClient(t *testing.T) {
	t.Parallel()
	node, sdk := acpSDK(t)
	e := newEnv(t,
		llmtest.Call("todo_write", `{"todos":[{"content":"Edit a.txt","status":"in_progress"}]}`),
		llmtest.Call("read_file", `{"path":"a.txt"}`),
		llmtest.Call("edit_file", `{"path":"a.txt","old_string":"unsaved buffer","new_string":"edited buffer"}`),
		llmtest.Text("Done editing."),
		llmtest.Reply{Text: "A long answer that never ends", Hang: true},
	)
	e.writeWS("a.txt", "disk line\n")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	script, err := filepath.Abs(filepath.Join("testdata", "acp", "client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Dir = e.ws
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.home, "MX_CLAW_HOME=" + e.home, "LANG=C.UTF-8",
		"MX_CLAW_BIN=" + binPath, "ACP_SDK_DIR=" + sdk, "ACP_WORKSPACE=" + e.ws}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("ACP client: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	var summary struct {
		SessionID string `json:"sessionId"`
		Buffer    string `json:"buffer"`
	}
	if err := json.Unmarshal(out.Bytes(), &summary); err != nil {
		t.Fatalf("client summary: %v\n%s", err, out.String())
	}
	// The model read the editor's buffer, not the disk.
	reqs := e.srv.Requests()
	if len(reqs) < 3 {
		t.Fatalf("model saw %d requests", len(reqs))
	}
	var readResult string
	for _, m := range reqs[2].Chat.Messages {
		if m.Role == "tool" {
			readResult = m.Content
		}
	}
	if !strings.Contains(readResult, "unsaved buffer line") || strings.Contains(readResult, "disk line") {
		t.Fatalf("read_file result should be the buffer: %q", readResult)
	}
	// The edit went to the editor, which owns saving it.
	if summary.Buffer != "edited buffer line\n" {
		t.Fatalf("buffer = %q", summary.Buffer)
	}
	if data, _ := os.ReadFile(filepath.Join(e.ws, "a.txt")); string(data) != "disk line\n" {
		t.Fatalf("disk = %q", data)
	}
	// The session is mx-claw's own: stored and shown from the terminal.
	d := e.show(summary.SessionID)
	if d.Session.Status != "cancelled" {
		t.Fatalf("status after the cancelled prompt = %s", d.Session.Status)
	}
	// Nothing but the log file was written by the ACP processes' logging.
	if data, err := os.ReadFile(filepath.Join(e.home, "logs", "acp.log")); err != nil || !strings.Contains(string(data), "acp initialize") {
		t.Fatalf("acp.log: %v %q", err, data)
	}
}
