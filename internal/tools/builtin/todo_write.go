package builtin

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/tools"
)

//go:embed todo_write.md
var todoWriteDescription string

const todoWriteSchema = `{
  "type": "object",
  "properties": {
    "todos": {
      "type": "array",
      "description": "The whole task list, in order; it replaces the previous one.",
      "maxItems": 100,
      "items": {
        "type": "object",
        "properties": {
          "content": {"type": "string", "minLength": 1, "maxLength": 500, "description": "What to do, in a few words."},
          "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
          "id": {"type": "string", "maxLength": 64}
        },
        "required": ["content", "status"],
        "additionalProperties": false
      }
    }
  },
  "required": ["todos"],
  "additionalProperties": false
}`

// todoWrite is the todo_write tool.
type todoWrite struct{}

func newTodoWrite() *todoWrite { return &todoWrite{} }

type todoWriteArgs struct {
	Todos []protocol.Todo `json:"todos"`
}

// todoWriteInfo is what todo_write is to the agent; Info returns it, shared.
var todoWriteInfo = tools.Info{Name: "todo_write", Description: todoWriteDescription, Schema: json.RawMessage(todoWriteSchema),
	Risk: tools.RiskRead, ConcurrencySafe: false}

func (*todoWrite) Info() tools.Info { return todoWriteInfo }
func (*todoWrite) Summary(args json.RawMessage) string {
	var a todoWriteArgs
	if decodeArgs(args, &a) != nil {
		return "Update the task list"
	}
	done := 0
	for _, t := range a.Todos {
		if t.Status == protocol.TodoCompleted {
			done++
		}
	}
	return fmt.Sprintf("Update the task list (%d/%d done)", done, len(a.Todos))
}

func (*todoWrite) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	var a todoWriteArgs
	if err := decodeArgs(args, &a); err != nil {
		return tools.Result{}, err
	}
	inProgress := 0
	for _, t := range a.Todos {
		if t.Status == protocol.TodoInProgress {
			inProgress++
		}
	}
	if env != nil && env.SetTodos != nil {
		env.SetTodos(a.Todos)
	}
	var b strings.Builder
	b.WriteString("Task list updated:\n")
	for _, t := range a.Todos {
		mark := "[ ]"
		switch t.Status {
		case protocol.TodoInProgress:
			mark = "[~]"
		case protocol.TodoCompleted:
			mark = "[x]"
		}
		fmt.Fprintf(&b, "%s %s\n", mark, t.Content)
	}
	if len(a.Todos) == 0 {
		b.WriteString("(empty)\n")
	}
	if inProgress > 1 {
		fmt.Fprintf(&b, "Note: %d tasks are in progress; keep one in progress at a time.\n", inProgress)
	}
	return tools.Result{Content: strings.TrimRight(b.String(), "\n")}, nil
}
