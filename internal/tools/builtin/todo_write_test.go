package builtin

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/tools"
)

func TestTodoWrite(t *testing.T) {
	t.Parallel()
	reg, err := tools.NewRegistry(newTodoWrite())
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		`{}`,
		`{"todos":[{"content":"x","status":"done"}]}`,
		`{"todos":[{"content":"","status":"pending"}]}`,
		`{"todos":[{"status":"pending"}]}`,
	} {
		if err := reg.Validate("todo_write", json.RawMessage(bad)); err == nil {
			t.Errorf("Validate(%s) passed", bad)
		}
	}
	var published []protocol.Todo
	env := &tools.Env{SetTodos: func(t []protocol.Todo) { published = t }}
	args := json.RawMessage(`{"todos":[{"content":"a","status":"completed"},{"content":"b","status":"in_progress"},{"content":"c","status":"in_progress"},{"content":"d","status":"pending"}]}`)
	if err := reg.Validate("todo_write", args); err != nil {
		t.Fatal(err)
	}
	res, err := newTodoWrite().Run(context.Background(), env, args)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[x] a", "[~] b", "[ ] d", "2 tasks are in progress"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("result %q lacks %q", res.Content, want)
		}
	}
	if len(published) != 4 || published[1].Content != "b" {
		t.Errorf("published %+v", published)
	}
	if got := newTodoWrite().Summary(args); got != "Update the task list (1/4 done)" {
		t.Errorf("Summary = %q", got)
	}
}
