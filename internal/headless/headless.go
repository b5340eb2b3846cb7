// Package headless renders a turn's events for `mx-claw run`: either the
// streamed answer as plain text (progress lines on stderr), or every event
// as one JSON line on stdout. Plain text is sanitised (termsafe) so that
// model or tool output cannot drive the user's terminal; JSON is data and
// is printed as it is.
//
// It knows only protocol events; it never sees the agent, the store or the
// model's raw stream. Imported by cli.
package headless

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/termsafe"
)

// Printer writes events as they arrive. It is not safe for concurrent use;
// the core calls its sink from one goroutine at a time.
type Printer struct {
	out, errw io.Writer
	json      bool
	enc       *json.Encoder
	// midLine says the last text written to out did not end a line.
	midLine bool
	// pendingCR holds back a CR that ended a delta until the next one
	// says whether it starts a CRLF.
	pendingCR bool
	err       error
}

// NewPrinter returns a Printer writing the answer (or JSON lines) to out and
// progress to errw.
func NewPrinter(out, errw io.Writer, jsonLines bool) *Printer {
	p := &Printer{out: out, errw: errw, json: jsonLines}
	if jsonLines {
		p.enc = json.NewEncoder(out)
		p.enc.SetEscapeHTML(false)
	}
	return p
}

// Err returns the first error writing output, if any.
func (p *Printer) Err() error { return p.err }

// Handle renders one event.
func (p *Printer) Handle(e protocol.Event) {
	if p.json {
		if err := p.enc.Encode(e); err != nil && p.err == nil {
			p.err = err
		}
		return
	}
	if e.ParentSessionID != "" {
		p.subagent(e)
		return
	}
	switch e.Type {
	case protocol.EventMessageDelta:
		text := e.Text
		if p.pendingCR {
			text = "\r" + text
			p.pendingCR = false
		}
		if strings.HasSuffix(text, "\r") {
			// Maybe half of a CRLF split over two deltas.
			text, p.pendingCR = text[:len(text)-1], true
		}
		p.write(p.out, termsafe.Sanitize(text))
		p.midLine = !strings.HasSuffix(text, "\n") && (p.midLine || text != "")
	case protocol.EventMessageCompleted:
		p.pendingCR = false
		if e.Message != nil && e.Message.Role == protocol.RoleAssistant && p.midLine {
			p.write(p.out, "\n")
			p.midLine = false
		}
	case protocol.EventTurnFailed, protocol.EventTurnCancelled, protocol.EventTurnPaused:
		// A cut answer ends its line, so that what the run prints next
		// (the error, the session) starts on its own.
		p.EndLine()
	case protocol.EventToolStarted:
		p.progress("• %s", termsafe.Sanitize(e.Summary))
	case protocol.EventToolCompleted:
		if e.OK != nil && !*e.OK {
			p.progress("  ✗ %s: %s", termsafe.Sanitize(e.Summary), termsafe.Sanitize(firstLine(e.Preview)))
		}
	case protocol.EventWarning:
		p.progress("⚠ %s", termsafe.Sanitize(firstLine(e.Text)))
	case protocol.EventHookWarning:
		p.progress("⚠ hook: %s", termsafe.Sanitize(firstLine(e.Text)))
	case protocol.EventPermissionRequested:
		p.progress("? %s needs approval", termsafe.Sanitize(e.Summary))
	case protocol.EventMemoryCandidate:
		if c := e.Candidate; c != nil {
			p.progress("Memory candidate %s for %s: %s (review: mx-claw memory candidates)", c.ID, c.File, termsafe.Sanitize(firstLine(c.Text)))
		}
	case protocol.EventSkillProposed:
		if s := e.Proposal; s != nil {
			p.progress("Skill proposed: %s (review: mx-claw skills proposed)", termsafe.Sanitize(s.Name))
		}
	case protocol.EventInputReturned:
		for _, q := range e.Queued {
			p.progress("⚠ a queued message was not sent: %s", termsafe.Sanitize(firstLine(q.Content)))
		}
	case protocol.EventRetry:
		cancel := ""
		if e.DelayMS >= 5000 {
			cancel = "; Ctrl-C cancels"
		}
		p.progress("Provider request failed (%s); retrying in %.1fs (attempt %d%s)", termsafe.Sanitize(e.Error), float64(e.DelayMS)/1000, e.Attempt+1, cancel)
	}
}

// EndLine ends the answer's line if text was written without a newline.
func (p *Printer) EndLine() {
	p.pendingCR = false
	if p.midLine {
		p.write(p.out, "\n")
		p.midLine = false
	}
}

// subagent renders a subagent's event: only its tool calls and problems,
// as progress lines indented under its task.
func (p *Printer) subagent(e protocol.Event) {
	switch e.Type {
	case protocol.EventToolStarted:
		p.progress("    • %s", termsafe.Sanitize(e.Summary))
	case protocol.EventWarning:
		p.progress("    ⚠ %s", termsafe.Sanitize(firstLine(e.Text)))
	case protocol.EventPermissionRequested:
		p.progress("    ? %s needs approval", termsafe.Sanitize(e.Summary))
	case protocol.EventTurnFailed:
		p.progress("    ✗ subagent: %s", termsafe.Sanitize(firstLine(e.Error)))
	}
}

func (p *Printer) progress(format string, args ...any) {
	if p.midLine {
		p.write(p.out, "\n")
		p.midLine = false
	}
	p.write(p.errw, fmt.Sprintf(format, args...)+"\n")
}

func (p *Printer) write(w io.Writer, s string) {
	if _, err := io.WriteString(w, s); err != nil && p.err == nil {
		p.err = err
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
