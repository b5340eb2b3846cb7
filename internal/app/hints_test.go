package app

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm"
	"github.com/mx-claw/mx-claw/internal/llm/openai"
)

// TestProviderErrorsSayWhatToDo: a refused key names the command that
// sets it; a server that is not there names its URL and `mx-claw doctor`;
// the provider's error stays underneath.
func TestProviderErrorsSayWhatToDo(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(401)
		w.Write([]byte(`{"error":{"message":"Incorrect API key provided"}}`))
	}))
	defer srv.Close()
	req := &llm.Request{Model: "m", Messages: []llm.Message{{Role: "user", Content: "hi"}}}
	c := hintingClient{provider: "acme", baseURL: srv.URL, Client: openai.New(openai.Config{BaseURL: srv.URL})}
	_, err := c.Stream(context.Background(), req, nil)
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) || !strings.Contains(err.Error(), "mx-claw model set acme api-key") {
		t.Errorf("401: %v", err)
	}

	l, _ := net.Listen("tcp", "127.0.0.1:0")
	url := "http://" + l.Addr().String() + "/v1"
	l.Close()
	c = hintingClient{provider: "acme", baseURL: url,
		Client: openai.New(openai.Config{BaseURL: url, Retry: llm.RetryPolicy{MaxAttempts: 1}})}
	_, err = c.Stream(context.Background(), req, nil)
	if err == nil || !strings.Contains(err.Error(), "The server at "+url+" is not answering") || !strings.Contains(err.Error(), "mx-claw doctor") {
		t.Errorf("connection refused: %v", err)
	}
}
