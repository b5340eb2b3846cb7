// Package web is mx-claw's browser panel: the static files under static/,
// embedded in the binary (FS), and the Content-Security-Policy they are
// served with (CSP). internal/server serves them at "/".
//
// The panel is plain ES modules and hand-written CSS with no build step, so
// `go install` produces a working binary without Node, and the files in the
// repository are exactly the files the browser runs. It talks to the
// server only through the HTTP API and the SSE stream of DESIGN §11; it
// holds no state the store does not have, so a reload, a second tab or a
// terminal on the same session all show the same transcript.
//
// Every string that comes from a model, a tool or a file reaches the page
// as text (textContent, never innerHTML), and Markdown is rendered by
// building DOM nodes, with links limited to http, https and mailto. The
// Content-Security-Policy allows scripts, styles and connections only from
// the server itself, no inline script or style, and requires Trusted Types
// for the DOM's HTML sinks, so a slip that assigns markup would throw
// instead of running.
//
// Only the server's wiring (internal/cli, internal/server) and tests may
// import this package; it imports nothing of mx-claw.
package web
