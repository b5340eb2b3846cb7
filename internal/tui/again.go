package tui

import (
	"context"
	"errors"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// How a turn ends, and what the user can do next: a turn stopped at its
// step budget is offered to continue with one key; a request that failed
// (or was cancelled) before the model answered is retried — by /retry, or
// by sending the same prompt again — from the stored transcript, so the
// prompt is not stored a second time; a configuration error gives the
// prompt back, since it was never stored.

// errorCode returns the protocol code an error carries, if any.
func errorCode(err error) protocol.ErrorCode {
	var c interface{ ErrorCode() protocol.ErrorCode }
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	return ""
}

// ended prints how the turn ended and sets up what may follow it.
func (m *Model) ended(err error) {
	tele := m.telemetry()
	code := m.failCode
	if c := errorCode(err); c != "" {
		code = c
	}
	prompt := m.turnPrompt
	m.failedPrompt, m.turnPrompt = "", ""
	if err != nil && m.turnsSeen > 0 && !m.answered && code != protocol.CodeMaxIterations {
		m.failedPrompt = prompt
	}
	switch {
	case err == nil:
		m.print(m.th.dim.Render(tele))
	case errors.Is(err, context.Canceled):
		m.print(m.th.warn.Render("Cancelled.") + m.th.dim.Render(" "+tele))
	case code == protocol.CodeMaxIterations:
		m.offer = "continue"
		m.print(m.th.warn.Render("⏸ "+clean(err.Error())+": the model is not done yet.")+m.th.dim.Render(" "+tele),
			"Press c to let it continue, or type a new message.",
			m.th.dim.Render("  (maxIterations in config.json sets the limit)"))
	case code == protocol.CodeBudget, code == protocol.CodeLoop:
		m.print(m.th.warn.Render("⏸ "+clean(err.Error())) + m.th.dim.Render(" "+tele))
	case code == protocol.CodeConfig && m.turnsSeen == 0:
		m.print(m.th.fail.Render("Configuration error: "+clean(err.Error())),
			"Your message was not sent; it is back in the input box.",
			"Fix the file named above and press Enter.")
		if prompt != "" {
			m.restoreInput(prompt)
		}
	default:
		m.print(m.th.fail.Render("Request failed: " + clean(err.Error())))
		if m.failedPrompt != "" {
			m.print("↑ Enter or /retry sends it again (it is stored once); /help for more.")
		} else {
			m.print("The session is still active: /retry sends the request again.")
		}
	}
	if err != nil && errors.Is(err, context.Canceled) && m.failedPrompt != "" {
		m.print(m.th.dim.Render("  ↑ Enter or /retry sends the request again."))
	}
}

// startAgain runs a turn on the transcript as it is: to continue after
// the step budget, or to retry a failed request.
func (m *Model) startAgain(what string) []tea.Cmd {
	m.print(m.th.dim.Render(what))
	b, sid := m.backend, m.sess.ID
	cmds := m.startRun(func(ctx context.Context, sink func(protocol.Event)) error {
		return b.Continue(ctx, sid, sink)
	})
	return cmds
}

// offerKey handles a key while the continue offer is shown on an empty
// input box: c (or Enter) continues, Esc dismisses; it reports whether it
// took the key.
func (m *Model) offerKey(s string) ([]tea.Cmd, bool) {
	if m.offer == "" || m.busy || m.input.Value() != "" {
		return nil, false
	}
	switch s {
	case "c", "C", "enter":
		m.offer = ""
		return m.startAgain("↻ Continuing the turn."), true
	case "esc":
		m.offer = ""
		return nil, true
	}
	m.offer = ""
	return nil, false
}

// offerView shows the continue offer.
func (m *Model) offerView() []string {
	if m.offer == "" || m.busy {
		return nil
	}
	return []string{m.th.accent.Render("⏵ ") + m.th.bold.Render("c") + " continue  " + m.th.dim.Render("· Esc dismiss · or type a new message")}
}

// isRetry reports whether text, about to be sent, is the prompt of the
// last turn that failed before the model answered it.
func (m *Model) isRetry(text string) bool {
	return m.failedPrompt != "" && strings.TrimSpace(text) == strings.TrimSpace(m.failedPrompt)
}
