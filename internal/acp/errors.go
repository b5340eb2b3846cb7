package acp

import (
	"errors"

	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/jsonrpc"
)

// errNotInitialized answers requests before initialize.
var errNotInitialized = jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "initialize first")

// rpcError gives err the JSON-RPC code the client can act on: a model that
// is not ready asks for authentication, an unknown session is not found.
func rpcError(err error) error {
	var notReady *app.NotReadyError
	var rpcErr *jsonrpc.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &rpcErr):
		return err
	case errors.As(err, &notReady):
		return &jsonrpc.Error{Code: jsonrpc.CodeAuthRequired, Message: err.Error()}
	case errors.Is(err, app.ErrUnknownSession):
		return &jsonrpc.Error{Code: jsonrpc.CodeNotFound, Message: err.Error()}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}
