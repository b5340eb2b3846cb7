package mcp

import "errors"

// ErrInvalidConfig is matched by errors about a server entry that cannot
// be used (see ConfigError).
var ErrInvalidConfig = errors.New("invalid MCP server configuration")

// ErrServerStopped is matched by a call's error when the server exited or
// broke its connection during the call; the next call starts it again.
var ErrServerStopped = errors.New("MCP server stopped")

// ErrCallTimeout is matched by a call's error when the server did not
// answer within the call timeout.
var ErrCallTimeout = errors.New("MCP call timed out")

// ErrStartFailed is matched by the error of a server that could not be
// started or did not finish its handshake within the start timeout.
var ErrStartFailed = errors.New("MCP server did not start")

// ErrResultTooLarge is matched by a call's error when the server sent a
// message over Settings.MaxMessageBytes; the server is stopped.
var ErrResultTooLarge = errors.New("MCP result too large")

// ErrUnavailable is matched by a call's error when the tool's server is no
// longer configured or allowed (the session's tool list is frozen, the
// configuration is not).
var ErrUnavailable = errors.New("MCP server unavailable")

// ErrClosed is returned once the Manager is closed.
var ErrClosed = errors.New("MCP manager closed")
