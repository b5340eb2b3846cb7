// Package clipboard reads a picture from the system clipboard, for the
// REPL's Ctrl+V: a screenshot copied there is attached to the message as
// an image file would be.
//
// Go has no portable clipboard API without cgo, so it asks the tools every
// desktop has or can install, as other terminal agents do: on Wayland
// `wl-paste` (wl-clipboard), on X11 `xclip`, on macOS `pngpaste` when it is
// installed and `osascript` otherwise. It first asks which types the
// clipboard offers and takes a PNG, JPEG, WebP or GIF, in that order, so
// text on the clipboard is never read as a picture. Without a tool, or
// without a picture, the caller is told so (ErrNoTool, ErrNoImage) and
// nothing else happens.
//
// The tools run with a time limit, and what they print is capped, so a
// hung clipboard owner or a huge picture cannot stall the UI or exhaust
// memory.
//
// Who may import it: the terminal UI (internal/tui) and tests. It imports
// no other mx-claw package.
package clipboard
