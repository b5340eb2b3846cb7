package agent

import (
	"fmt"
	"path/filepath"
	"unicode/utf8"

	"github.com/mx-claw/mx-claw/internal/llm"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// Size limits. A model or a command that produces without end must not
// fill memory, the store or the user's screen: a model's answer and a
// call's arguments are capped as they stream (llm.Request), and a call
// streams only so much tool.output; the whole output of a command is kept
// in a file (tools.OutputFiles) for read_tool_output.
const (
	// DefaultMaxAnswerBytes caps the text and reasoning of one model
	// answer. Models write at most some hundred thousand tokens in one
	// answer, well under this.
	DefaultMaxAnswerBytes = 4 << 20
	// DefaultMaxArgumentBytes caps the arguments of one tool call.
	DefaultMaxArgumentBytes = 1 << 20
	// DefaultMaxStreamedOutput caps the tool.output events of one call.
	DefaultMaxStreamedOutput = 256 << 10
)

// limitRequest sets the turn's caps on a model request.
func (c *Core) limitRequest(req *llm.Request) *llm.Request {
	req.MaxAnswerBytes = c.opts.MaxAnswerBytes
	req.MaxArgumentBytes = c.opts.MaxArgumentBytes
	return req
}

// noteTooLarge records a call whose arguments the client dropped for
// passing the cap: it is stored with empty arguments ({}) and answered
// with tooLargeResult instead of running.
func (t *turn) noteTooLarge(tc *protocol.ToolCall, size int64) {
	if t.tooLarge == nil {
		t.tooLarge = make(map[string]int64)
	}
	t.tooLarge[tc.ID] = size
	tc.Arguments = "{}"
}

// tooLargeResult is the result of a call noted by noteTooLarge, or "".
func (t *turn) tooLargeResult(tc protocol.ToolCall) string {
	size, ok := t.tooLarge[tc.ID]
	if !ok {
		return ""
	}
	return fmt.Sprintf("Tool failed: the arguments of this call were %s, more than the %s a call may carry; "+
		"they were dropped and nothing ran. Send large content in smaller pieces (for example, write a file "+
		"in parts with several edits).", llm.FormatBytes(size), llm.FormatBytes(int64(t.core.opts.MaxArgumentBytes)))
}

// outputStream returns the tool.output sink of a call: it streams the
// call's output up to the cap, then says once that the rest is not shown.
// It is called from one goroutine per call.
func (t *turn) outputStream(c *call) func(string) {
	left := t.core.opts.MaxStreamedOutput
	return func(text string) {
		switch {
		case left <= 0:
			return
		case len(text) > left:
			cut := left
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			text = text[:cut] + fmt.Sprintf("\n[… more output is not streamed (%s per call); the result keeps its head and tail …]\n",
				llm.FormatBytes(int64(t.core.opts.MaxStreamedOutput)))
			left = 0
		default:
			left -= len(text)
		}
		t.emit(protocol.Event{Type: protocol.EventToolOutput, ToolCallID: c.ID, ToolName: c.Name, Text: text, Step: t.step})
	}
}

// outputFiles returns where a session's cut outputs are kept, or nil.
func (c *Core) outputFiles(sessionID string) *tools.OutputFiles {
	if c.opts.OutputDir == "" {
		return nil
	}
	return &tools.OutputFiles{Dir: filepath.Join(c.opts.OutputDir, sessionID)}
}
