package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/llm"
)

// stubClient fails every request with err after reporting a retry with it.
type stubClient struct{ err error }

func (c stubClient) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	if onDelta != nil {
		onDelta(llm.Delta{Kind: llm.DeltaRetry, Attempt: 1, Err: c.err})
	}
	return nil, c.err
}

func TestRedactingClient(t *testing.T) {
	t.Parallel()
	const key = "sk-app-redact-0123456789"
	tests := []struct {
		name  string
		err   error
		check func(t *testing.T, err error)
	}{
		{"API error keeps its type", llm.NewAPIError(401, []byte(`{"error":{"message":"bad key `+key+`","code":"invalid_api_key"}}`), 0), func(t *testing.T, err error) {
			var api *llm.APIError
			if !errors.As(err, &api) || api.Status != 401 || strings.Contains(api.Body, key) || api.Code != "invalid_api_key" {
				t.Errorf("%#v", err)
			}
		}},
		{"stream error", &llm.StreamError{Message: "echo " + key, Err: fmt.Errorf("read: %s", key)}, func(t *testing.T, err error) {
			var se *llm.StreamError
			if !errors.As(err, &se) || strings.Contains(se.Err.Error(), key) {
				t.Errorf("%#v", err)
			}
		}},
		{"wrapped, cancelled", fmt.Errorf("request with %s: %w", key, context.Canceled), func(t *testing.T, err error) {
			if !errors.Is(err, context.Canceled) {
				t.Errorf("lost context.Canceled: %v", err)
			}
		}},
		{"no key, untouched", errors.New("connection refused"), func(t *testing.T, err error) {
			if err.Error() != "connection refused" {
				t.Error(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var retryErr error
			c := redactingClient{Client: stubClient{tt.err}, key: key}
			_, err := c.Stream(context.Background(), &llm.Request{}, func(d llm.Delta) { retryErr = d.Err })
			for _, e := range []error{err, retryErr} {
				if e == nil || strings.Contains(e.Error(), key) {
					t.Fatalf("error %v shows the key", e)
				}
			}
			tt.check(t, err)
		})
	}
	p := &config.Provider{Name: "p", BaseURL: "http://x/v1"}
	if a, b := clientKey(p, "k1"), clientKey(p, "k2"); a == b || strings.Contains(a, "k1") {
		t.Errorf("clientKey %q %q", a, b)
	}
}

// warmStub counts Warm calls.
type warmStub struct {
	stubClient
	n *int
}

func (w warmStub) Warm() { *w.n++ }

// TestRedactingClientPassesWarmOn: wrapping a client keeps its Warm.
func TestRedactingClientPassesWarmOn(t *testing.T) {
	t.Parallel()
	n := 0
	var c llm.Client = redactingClient{Client: warmStub{n: &n}, key: "k"}
	w, ok := c.(llm.Warmer)
	if !ok {
		t.Fatal("the wrapped client is not an llm.Warmer")
	}
	w.Warm()
	if n != 1 {
		t.Fatalf("Warm reached the inner client %d times, want 1", n)
	}
	// A client that cannot warm is left alone.
	redactingClient{Client: stubClient{}, key: "k"}.Warm()
}
