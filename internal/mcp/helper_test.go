package mcp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fast tests talk to servers built with the Go SDK, in this process:
// over streamable HTTP (httptest), and over stdio by running this test
// binary again as a server (TestMain sees helperEnv and serves instead of
// testing). The slow tests (npm_test.go) use real servers from npm.

// helperEnv makes the test binary an MCP server over stdio.
const helperEnv = "MX_CLAW_MCP_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		fmt.Fprintln(os.Stderr, "helper server: starting")
		if err := newTestServer().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "helper server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type echoIn struct {
	Message string `json:"message" jsonschema:"the text to echo"`
}

type sizeIn struct {
	Bytes int `json:"bytes" jsonschema:"how many bytes to return"`
}

type sleepIn struct {
	Seconds float64 `json:"seconds"`
}

type none struct{}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

// newTestServer is a server with a tool for each thing the tests need.
func newTestServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "helper", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo a message.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return text("echo: " + in.Message), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "env", Description: "Print the environment."},
		func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
			env := os.Environ()
			sort.Strings(env)
			return text(strings.Join(env, "\n")), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "crash", Description: "Exit at once."},
		func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "helper server: crashing on purpose")
			os.Exit(3)
			return nil, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "sleep", Description: "Sleep, ignoring cancellation."},
		func(_ context.Context, _ *sdk.CallToolRequest, in sleepIn) (*sdk.CallToolResult, any, error) {
			time.Sleep(time.Duration(in.Seconds * float64(time.Second)))
			return text("slept"), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "big", Description: "Return many bytes."},
		func(_ context.Context, _ *sdk.CallToolRequest, in sizeIn) (*sdk.CallToolResult, any, error) {
			return text("BEGIN" + strings.Repeat("x", in.Bytes) + "END"), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "Report an error."},
		func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
			return nil, nil, fmt.Errorf("it failed")
		})
	return s
}

// testHTTPServer serves newTestServer over streamable HTTP, checking the
// Authorization header when auth is set.
func testHTTPServer(t *testing.T, auth string) *httptest.Server {
	t.Helper()
	srv := newTestServer()
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if auth != "" && r.Header.Get("Authorization") != auth {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}
