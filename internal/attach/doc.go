// Package attach turns a text file into the block that carries it in a
// user message: `<file path="REL">` … `</file>`, appended after the
// message's text, capped at [MaxBytes] with a note when cut. The REPL's
// @path mentions and custom commands' @path references both attach files
// this way, so the model sees one shape and a stored message's blocks can
// be read back (tui's splitAttachments).
//
// It does not decide which files may be read: the caller resolves the
// path within the workspace and applies its rules first.
//
// Who may import it: any package; it imports only safefile.
package attach
