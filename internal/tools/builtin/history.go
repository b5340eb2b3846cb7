package builtin

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
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
    "call_id": {"type": "string", "minLength": 1, "description": "Instead of seq: the id of the tool call whose result said its whole output is kept."},
    "offset": {"type": "integer", "minimum": 1, "description": "The 1-based line to start at. Default 1."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 2000, "description": "How many lines. Default 500."}
  },
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
	Seq    int64  `json:"seq"`
	CallID string `json:"call_id"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

// readToolOutputInfo is what read_tool_output is to the agent; Info returns it, shared.
var readToolOutputInfo = tools.Info{Name: "read_tool_output", Description: readToolOutputDescription, Schema: json.RawMessage(readToolOutputSchema),
	Risk: tools.RiskRead, ConcurrencySafe: true}

func (readToolOutput) Info() tools.Info { return readToolOutputInfo }
func (readToolOutput) Summary(args json.RawMessage) string {
	var a readToolOutputArgs
	switch {
	case decodeArgs(args, &a) != nil:
		return "Read a stored output"
	case a.Seq == 0 && a.CallID != "":
		return fmt.Sprintf("Read the output of call %s", a.CallID)
	}
	return fmt.Sprintf("Read stored message %d", a.Seq)
}

func (readToolOutput) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	var a readToolOutputArgs
	if err := decodeArgs(args, &a); err != nil {
		return tools.Result{}, err
	}
	if (a.Seq == 0) == (a.CallID == "") {
		return tools.Result{}, errors.New("give either seq or call_id")
	}
	msgs, err := sessionHistory(env)
	if err != nil {
		return tools.Result{}, err
	}
	var m *protocol.Message
	for i := range msgs {
		if a.Seq != 0 && msgs[i].Seq == a.Seq || a.CallID != "" && msgs[i].Role == protocol.RoleTool && msgs[i].ToolCallID == a.CallID {
			m = &msgs[i] // the last result of a call id wins
		}
	}
	if m == nil {
		if a.Seq != 0 {
			return tools.Result{}, fmt.Errorf("no message %d in this session", a.Seq)
		}
		return tools.Result{}, fmt.Errorf("no result of call %q in this session", a.CallID)
	}
	offset, limit := max(a.Offset, 1), a.Limit
	if limit <= 0 {
		limit = 500
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Message %d (%s", m.Seq, m.Role)
	if m.ToolName != "" {
		fmt.Fprintf(&b, ", %s result", m.ToolName)
	}
	var lines []string
	total := 0
	if f := keptOutput(env, m); f != nil {
		defer f.Close()
		b.WriteString(", its whole kept output")
		if lines, total, err = fileLines(f, offset, limit); err != nil {
			return tools.Result{}, fmt.Errorf("read the kept output of message %d: %w", m.Seq, err)
		}
	} else {
		all := strings.Split(strings.TrimRight(m.Content, "\n"), "\n")
		total = len(all)
		if offset <= total {
			lines = all[offset-1 : min(total, offset-1+limit)]
		}
	}
	if offset > total {
		return tools.Result{}, fmt.Errorf("message %d has %d lines; offset %d is past its end", m.Seq, total, offset)
	}
	end := offset - 1 + len(lines)
	fmt.Fprintf(&b, "), lines %d–%d of %d:\n", offset, end, total)
	for i, l := range lines {
		fmt.Fprintf(&b, "%6d\t%s\n", offset+i, l)
	}
	if end < total {
		ref := fmt.Sprintf("seq=%d", m.Seq)
		if a.Seq == 0 {
			ref = fmt.Sprintf("call_id=%q", a.CallID)
		}
		fmt.Fprintf(&b, "[… call read_tool_output with %s and offset %d to continue.]", ref, end+1)
	}
	return tools.Result{Content: tools.Truncate(strings.TrimRight(b.String(), "\n"), 256<<10)}, nil
}

// keptOutput opens the whole output kept for a tool result, or returns nil
// when there is none.
func keptOutput(env *tools.Env, m *protocol.Message) *os.File {
	if env.Outputs == nil || m.Role != protocol.RoleTool || m.ToolCallID == "" {
		return nil
	}
	f, err := env.Outputs.Open(m.ToolCallID)
	if err != nil {
		return nil
	}
	return f
}

// maxLineBytes caps one line read from a kept output: a command's output
// need not have line ends at all.
const maxLineBytes = 2000

// fileLines reads lines [offset, offset+limit) of r, each cut at
// maxLineBytes, and counts all its lines, without holding more than those.
func fileLines(r io.Reader, offset, limit int) ([]string, int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var out []string
	n := 0
	var cur []byte
	lineLen := 0
	flush := func() {
		n++
		if n >= offset && n < offset+limit {
			l := strings.ToValidUTF8(string(cur), "\uFFFD")
			if lineLen > maxLineBytes {
				l += fmt.Sprintf("… [line cut: %d bytes]", lineLen)
			}
			out = append(out, l)
		}
		cur, lineLen = cur[:0], 0
	}
	pending := false
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			pending = true
			body := bytes.TrimSuffix(chunk, []byte("\n"))
			lineLen += len(body)
			if room := maxLineBytes - len(cur); room > 0 {
				cur = append(cur, body[:min(len(body), room)]...)
			}
			if len(chunk) > len(body) {
				flush()
				pending = false
			}
		}
		switch {
		case err == nil || errors.Is(err, bufio.ErrBufferFull):
		case err == io.EOF:
			if pending {
				flush()
			}
			return out, n, nil
		default:
			return nil, 0, err
		}
	}
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

// searchHistoryInfo is what search_history is to the agent; Info returns it, shared.
var searchHistoryInfo = tools.Info{Name: "search_history", Description: searchHistoryDescription, Schema: json.RawMessage(searchHistorySchema),
	Risk: tools.RiskRead, ConcurrencySafe: true}

func (searchHistory) Info() tools.Info { return searchHistoryInfo }
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
