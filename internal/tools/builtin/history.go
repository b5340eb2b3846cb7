package builtin

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/tools"
)

//go:embed read_tool_output.md
var readToolOutputDescription string

//go:embed search_history.md
var searchHistoryDescription string

const readToolOutputSchema = `{
  "type": "object",
  "properties": {
    "seq": {"type": "integer", "minimum": 1, "description": "The message number given in the marker of a cut result."},
    "offset": {"type": "integer", "minimum": 1, "description": "The 1-based line to start at. Default 1."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 2000, "description": "How many lines. Default 500."}
  },
  "required": ["seq"],
  "additionalProperties": false
}`

const searchHistorySchema = `{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 2, "description": "Text to look for, case-insensitive."},
    "max_results": {"type": "integer", "minimum": 1, "maximum": 50, "description": "Default 10."}
  },
  "required": ["query"],
  "additionalProperties": false
}`

// errNoHistory is returned when a history tool runs without a session.
var errNoHistory = errors.New("this session's history is not available")

// sessionHistory returns the session's stored transcript from env.
func sessionHistory(env *tools.Env) ([]protocol.Message, error) {
	if env == nil || env.History == nil {
		return nil, errNoHistory
	}
	return env.History()
}

// readToolOutput is the read_tool_output tool: the whole text of a stored
// message (a tool result cut in the model's view, an old message
// compacted away).
type readToolOutput struct{}

// NewReadToolOutput returns the read_tool_output tool.
func NewReadToolOutput() tools.Tool { return readToolOutput{} }

type readToolOutputArgs struct {
	Seq    int64 `json:"seq"`
	Offset int   `json:"offset"`
	Limit  int   `json:"limit"`
}

func (readToolOutput) Name() string            { return "read_tool_output" }
func (readToolOutput) Description() string     { return readToolOutputDescription }
func (readToolOutput) Schema() json.RawMessage { return json.RawMessage(readToolOutputSchema) }
func (readToolOutput) Risk() tools.Risk        { return tools.RiskRead }
func (readToolOutput) ConcurrencySafe() bool   { return true }
func (readToolOutput) Summary(args json.RawMessage) string {
	var a readToolOutputArgs
	if decodeArgs(args, &a) != nil {
		return "Read a stored output"
	}
	return fmt.Sprintf("Read stored message %d", a.Seq)
}

func (readToolOutput) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	var a readToolOutputArgs
	if err := decodeArgs(args, &a); err != nil {
		return tools.Result{}, err
	}
	msgs, err := sessionHistory(env)
	if err != nil {
		return tools.Result{}, err
	}
	for _, m := range msgs {
		if m.Seq != a.Seq {
			continue
		}
		lines := strings.Split(strings.TrimRight(m.Content, "\n"), "\n")
		offset, limit := max(a.Offset, 1), a.Limit
		if limit <= 0 {
			limit = 500
		}
		if offset > len(lines) {
			return tools.Result{}, fmt.Errorf("message %d has %d lines; offset %d is past its end", a.Seq, len(lines), offset)
		}
		end := min(len(lines), offset-1+limit)
		var b strings.Builder
		fmt.Fprintf(&b, "Message %d (%s", m.Seq, m.Role)
		if m.ToolName != "" {
			fmt.Fprintf(&b, ", %s result", m.ToolName)
		}
		fmt.Fprintf(&b, "), lines %d–%d of %d:\n", offset, end, len(lines))
		for i := offset - 1; i < end; i++ {
			fmt.Fprintf(&b, "%6d\t%s\n", i+1, lines[i])
		}
		if end < len(lines) {
			fmt.Fprintf(&b, "[… call read_tool_output with seq=%d and offset %d to continue.]", a.Seq, end+1)
		}
		return tools.Result{Content: tools.Truncate(strings.TrimRight(b.String(), "\n"), 256<<10)}, nil
	}
	return tools.Result{}, fmt.Errorf("no message %d in this session", a.Seq)
}

// searchHistory is the search_history tool: finds text in the session's
// whole stored transcript, including what compaction took out of view.
type searchHistory struct{}

// NewSearchHistory returns the search_history tool.
func NewSearchHistory() tools.Tool { return searchHistory{} }

type searchHistoryArgs struct {
	Query      string `json:"query"`
	MaxResults int    `json:"max_results"`
}

func (searchHistory) Name() string            { return "search_history" }
func (searchHistory) Description() string     { return searchHistoryDescription }
func (searchHistory) Schema() json.RawMessage { return json.RawMessage(searchHistorySchema) }
func (searchHistory) Risk() tools.Risk        { return tools.RiskRead }
func (searchHistory) ConcurrencySafe() bool   { return true }
func (searchHistory) Summary(args json.RawMessage) string {
	var a searchHistoryArgs
	if decodeArgs(args, &a) != nil {
		return "Search the session's history"
	}
	return fmt.Sprintf("Search history for %q", a.Query)
}

func (searchHistory) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	var a searchHistoryArgs
	if err := decodeArgs(args, &a); err != nil {
		return tools.Result{}, err
	}
	msgs, err := sessionHistory(env)
	if err != nil {
		return tools.Result{}, err
	}
	limit := a.MaxResults
	if limit <= 0 {
		limit = 10
	}
	q := strings.ToLower(a.Query)
	var b strings.Builder
	found := 0
	for i := len(msgs) - 1; i >= 0; i-- { // newest first
		m := &msgs[i]
		text := m.Content
		for _, c := range m.ToolCalls {
			text += "\n" + c.Name + " " + c.Arguments
		}
		at := strings.Index(strings.ToLower(text), q)
		if at < 0 || m.Role == protocol.RoleSystem {
			continue
		}
		found++
		if found > limit {
			continue
		}
		from, to := max(0, at-120), min(len(text), at+len(q)+120)
		for from > 0 && !utf8Start(text[from]) {
			from--
		}
		for to < len(text) && !utf8Start(text[to]) {
			to++
		}
		fmt.Fprintf(&b, "seq %d (%s): …%s…\n", m.Seq, m.Role, strings.ReplaceAll(text[from:to], "\n", " ⏎ "))
	}
	if found == 0 {
		return tools.Result{Content: fmt.Sprintf("No message of this session contains %q.", a.Query)}, nil
	}
	if found > limit {
		fmt.Fprintf(&b, "[%d more messages match; narrow the query.]\n", found-limit)
	}
	b.WriteString("Use read_tool_output with a seq to read a whole message.")
	return tools.Result{Content: b.String()}, nil
}

func utf8Start(c byte) bool { return c&0xC0 != 0x80 }
