package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm"
	"github.com/mx-claw/mx-claw/internal/llm/openai"
)

// Provider errors say what to do: which key was refused and the command
// that sets it, which server is not answering and how to check it, how
// long a provider asks to wait. The error keeps its type underneath
// (errors.As still finds an *llm.APIError), so retries and exit codes do
// not change.

// hintingClient adds what to do to a provider client's errors.
type hintingClient struct {
	llm.Client
	provider, baseURL string
}

// Warm passes llm.Warmer on.
func (c hintingClient) Warm() {
	if w, ok := c.Client.(llm.Warmer); ok {
		w.Warm()
	}
}

// Stream calls the client and adds a hint to its error.
func (c hintingClient) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	resp, err := c.Client.Stream(ctx, req, onDelta)
	if err != nil && ctx.Err() == nil {
		if h := providerHint(err, c.provider, c.baseURL, req.Model); h != "" {
			err = &HintedError{Err: err, Hint: h}
		}
	}
	return resp, err
}

// HintedError is an error with what the user can do about it.
type HintedError struct {
	Err  error
	Hint string
}

func (e *HintedError) Error() string { return e.Err.Error() + ". " + e.Hint }
func (e *HintedError) Unwrap() error { return e.Err }

// providerHint says what to do about a provider's error, or "".
func providerHint(err error, provider, baseURL, model string) string {
	var apiErr *llm.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.Status {
		case 401:
			return fmt.Sprintf("The API key of provider %s was refused: set a valid one with `mx-claw model set %s api-key`", provider, provider)
		case 403:
			return fmt.Sprintf("Provider %s refused access with this key: check the key's permissions, or set another with `mx-claw model set %s api-key`", provider, provider)
		case 404:
			return fmt.Sprintf("%s has no model %q (or no /chat/completions): `mx-claw model refresh %s` lists what it serves", baseURL, model, provider)
		case 429:
			if apiErr.RetryAfter > 0 {
				return fmt.Sprintf("Provider %s asks to wait %s before the next request; try again then", provider, apiErr.RetryAfter.Round(1e9))
			}
		}
		return ""
	}
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("The server at %s is not answering: check that it runs and the URL is right (`mx-claw model status`), or run `mx-claw doctor`", baseURL)
	case errors.As(err, &dnsErr):
		return fmt.Sprintf("The host of %s was not found: check the URL (`mx-claw model status`) and your network, or run `mx-claw doctor`", baseURL)
	}
	return ""
}

// ProbeModel tests a provider's settings with one small request (a
// one-token answer): the model commands' wizard sends it before saving.
// Its error never holds the key.
func ProbeModel(ctx context.Context, baseURL, key, model string) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	c := redactingClient{Client: openai.New(openai.Config{BaseURL: baseURL, APIKey: key,
		Retry: llm.RetryPolicy{MaxAttempts: 1}, IdleTimeout: 30 * time.Second}), key: key}
	_, err := c.Stream(ctx, &llm.Request{Model: model, MaxTokens: 1,
		Messages: []llm.Message{{Role: "user", Content: "Reply with the word OK."}}}, nil)
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("%s did not answer within a minute", baseURL)
	}
	return err
}
