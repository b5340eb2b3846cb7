package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/execx"
)

func TestBackgroundProcessTools(t *testing.T) {
	t.Parallel()
	env, _ := newEnv(t)
	env.Jobs = &execx.Jobs{}
	defer env.Jobs.Close()
	rc, out, kill := NewRunCommand(), NewProcessOutput(), NewProcessKill()

	if got := rc.Summary(json.RawMessage(`{"command":"npm run dev","background":true}`)); got != "Run in the background: npm run dev" {
		t.Errorf("Summary = %q", got)
	}
	res, err := run(t, rc, env, `{"command":"echo booting; sleep 0.2; echo 'ready on port 3000'; sleep 60","background":true}`)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Started background process (bg\d+) \(pid (\d+)\)`).FindStringSubmatch(res)
	if m == nil {
		t.Fatalf("result = %q", res)
	}
	id := m[1]
	res, err = run(t, out, env, `{"id":"`+id+`","wait_for":"ready on port \\d+","timeout":10}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"booting\n", "ready on port 3000\n", `"ready on port \\d+" appeared`, "is running"} {
		if !strings.Contains(res, want) {
			t.Errorf("process_output lacks %q:\n%s", want, res)
		}
	}
	if res, _ = run(t, out, env, `{"id":"`+id+`"}`); !strings.Contains(res, "(no new output)") {
		t.Errorf("second read: %s", res)
	}
	r, err := out.Run(context.Background(), env, json.RawMessage(`{"id":"`+id+`","wait_for":"never","timeout":1}`))
	if err != nil || !r.IsError || !strings.Contains(r.Content, "did not appear within 1s") {
		t.Errorf("timed-out wait: %v %+v", err, r)
	}
	if _, err := out.Run(context.Background(), env, json.RawMessage(`{"id":"`+id+`","wait_for":"("}`)); err == nil {
		t.Error("a bad regular expression was accepted")
	}
	if res, err = run(t, kill, env, `{"id":"`+id+`"}`); err != nil || !strings.Contains(res, "has ended") {
		t.Errorf("process_kill: %v %s", err, res)
	}
	// Another session's calls cannot reach it.
	other := *env
	other.SessionID = "other"
	if _, err := kill.Run(context.Background(), &other, json.RawMessage(`{"id":"`+id+`"}`)); !errors.Is(err, execx.ErrNoJob) {
		t.Errorf("another session: err = %v", err)
	}
	// Without Jobs there is no background.
	env.Jobs = nil
	if _, err := rc.Run(context.Background(), env, json.RawMessage(`{"command":"sleep 1","background":true}`)); err == nil {
		t.Error("background without Jobs succeeded")
	}
}
