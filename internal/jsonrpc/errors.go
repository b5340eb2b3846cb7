package jsonrpc

import (
	"errors"
	"fmt"
)

// The error codes of JSON-RPC 2.0, and the two that ACP adds.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeAuthRequired says the agent needs the client to authenticate
	// first (ACP).
	CodeAuthRequired = -32000
	// CodeNotFound says a named resource (a session) does not exist (ACP).
	CodeNotFound = -32002
	// CodeRequestCancelled answers a request the peer cancelled.
	CodeRequestCancelled = -32800
)

// ErrClosed is returned by Call and Notify once the connection is closed.
var ErrClosed = errors.New("jsonrpc: connection closed")

// Error is a JSON-RPC error object. A Handler that returns one has it sent
// as it is; any other error is sent as an internal error with its message.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// Errorf returns an *Error with code and a formatted message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// InvalidParams returns an invalid-params error with a formatted message.
func InvalidParams(format string, args ...any) *Error {
	return Errorf(CodeInvalidParams, format, args...)
}
