package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/llm"
	"github.com/mx-claw/mx-claw/internal/secret"
)

// NewSecrets builds the secret chain of a home from the process
// environment (MX_CLAW_SECRET_COMMAND, MX_CLAW_SECRET_BACKEND and the
// providers' key variables). Open builds one for its App; commands that
// need no store (model, doctor) call it directly.
func NewSecrets(home string) (*secret.Chain, error) {
	return secret.FromEnv(home, config.KeyEnvVars)
}

// clientKey identifies a client by what it was built from, so that a key
// or base URL changed during the process gets a new client. The key is
// hashed, not kept.
func clientKey(p *config.Provider, key string) string {
	sum := sha256.Sum256([]byte(key))
	return p.Name + "\x00" + p.BaseURL + "\x00" + hex.EncodeToString(sum[:8])
}

// redactingClient hides the API key in a client's errors: some gateways
// repeat the key they rejected in their error body, and errors end up in
// events, the database and the terminal.
type redactingClient struct {
	llm.Client
	key string
}

// Warm passes llm.Warmer on.
func (c redactingClient) Warm() {
	if w, ok := c.Client.(llm.Warmer); ok {
		w.Warm()
	}
}

// Stream calls the client and redacts its errors and retry reports.
func (c redactingClient) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	wrapped := onDelta
	if onDelta != nil {
		wrapped = func(d llm.Delta) {
			if d.Err != nil {
				d.Err = redactError(d.Err, c.key)
			}
			onDelta(d)
		}
	}
	resp, err := c.Client.Stream(ctx, req, wrapped)
	if err != nil {
		err = redactError(err, c.key)
	}
	return resp, err
}

// redactError returns err with key hidden. Provider errors keep their
// type (with their fields redacted); any other error that shows the key is
// replaced by its redacted text, still matching context cancellation.
func redactError(err error, key string) error {
	if len(key) < 4 {
		return err
	}
	if e, ok := err.(*llm.APIError); ok {
		cp := *e
		cp.Message, cp.Body = secret.Redact(e.Message, key), secret.Redact(e.Body, key)
		cp.Type, cp.Code = secret.Redact(e.Type, key), secret.Redact(e.Code, key)
		return &cp
	}
	if e, ok := err.(*llm.StreamError); ok {
		cp := *e
		cp.Message, cp.Type, cp.Code = secret.Redact(e.Message, key), secret.Redact(e.Type, key), secret.Redact(e.Code, key)
		if cp.Err != nil {
			cp.Err = redactError(cp.Err, key)
		}
		return &cp
	}
	if !strings.Contains(err.Error(), key) {
		var apiErr *llm.APIError
		if !errors.As(err, &apiErr) || (!strings.Contains(apiErr.Body, key) && !strings.Contains(apiErr.Message, key)) {
			return err
		}
	}
	r := &redactedError{msg: secret.Redact(err.Error(), key)}
	switch {
	case errors.Is(err, context.Canceled):
		r.cause = context.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		r.cause = context.DeadlineExceeded
	}
	return r
}

// redactedError is an error whose text had a key in it.
type redactedError struct {
	msg   string
	cause error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.cause }
