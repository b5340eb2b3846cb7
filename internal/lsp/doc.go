// Package lsp asks language servers what is wrong with the files the
// agent edits: after edit_file, write_file and apply_patch, the errors a
// change brought (compared with the file's errors just before it) are
// added to the call's result, and the diagnostics tool gives a file's
// diagnostics on demand. It only reads: no code actions, no formatting.
//
// A Manager starts servers lazily, one per workspace root and server, the
// first time a file with one of the server's extensions is checked, and
// stops them when it is closed (with the process) or when they have been
// idle for a while. Servers come from config by file extension; gopls for
// .go files is the default. A server that is not installed gives no
// diagnostics, and the session is told so once.
//
// The client is small and written here: JSON-RPC 2.0 with Content-Length
// framing over the server's stdin and stdout (conn.go), initialize and
// initialized, textDocument/didOpen, didChange (full text) and didClose,
// and the diagnostics the server pushes (textDocument/publishDiagnostics,
// with document versions). The Go LSP libraries are either internal to
// gopls or not clearly maintained; what mx-claw needs is a few hundred
// lines. Requests the server makes of the client (workspace/configuration,
// client/registerCapability, window/workDoneProgress/create) get empty
// answers.
//
// A server runs with the environment allow-list of internal/execx (no API
// keys), in the workspace root.
//
// Who may import it: the app wiring (and tests). It imports tools (for
// the diagnostics tool and the workspace) and execx (the environment).
package lsp
