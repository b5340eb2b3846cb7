// Package tui is mx-claw's interactive terminal UI: the REPL people spend
// their day in. It is a Bubble Tea v2 program that runs inline — no
// alternate screen. Everything finished (a user message, an answer
// rendered as Markdown, a tool card with its diff) is printed once into the
// terminal's own scrollback; only a small live area at the bottom is
// redrawn: the message streaming in, running tool cards, an approval
// prompt, queued messages, the input box and the status line. That keeps
// redraws small and flicker-free however long the session grows, and lets
// the terminal's own scrolling, search and selection work.
//
// The UI talks to mx-claw only through the Backend interface, protocol
// types and plain values (DESIGN §12): it never sees the agent, the model
// client or the store, so the same UI can later attach to a server.
// Every model, tool and file string passes through termsafe.Sanitize
// before it reaches the terminal.
//
// Only internal/cli (and tests) may import tui.
package tui
