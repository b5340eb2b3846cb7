package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// start runs the command with args until the test ends and returns the
// base URL it printed.
func start(t *testing.T, args ...string) (url string, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, args, pw, io.Discard)
		pw.CloseWithError(errors.New("run returned"))
		done <- err
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("no URL line: %v (run: %v)", err, <-done)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	stop = sync.OnceValue(func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(5 * time.Second):
			return errors.New("run did not return after cancel")
		}
	})
	t.Cleanup(func() { _ = stop() })
	return strings.TrimSpace(line), stop
}

// get sends a GET to url.
func get(t *testing.T, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return http.DefaultClient.Do(req)
}

// chat posts a streaming chat request and returns the body.
func chat(t *testing.T, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/chat/completions", strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(data)
}

func TestRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	logPath := filepath.Join(dir, "requests.jsonl")
	err := os.WriteFile(script, []byte(`{
	  "models": ["bench-model"],
	  "replies": [
	    {"toolCalls": [{"name": "read", "arguments": "{\"path\":\"go.mod\"}"}]},
	    {"status": 429, "retryAfter": "1"},
	    {"text": "all done", "chunkDelayMs": 1}
	  ],
	  "fallback": {"text": "nothing left"}
	}`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	url, stop := start(t, "--script", script, "--log", logPath)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/v1") {
		t.Fatalf("URL line %q", url)
	}

	resp, err := get(t, url+"/models")
	if err != nil {
		t.Fatal(err)
	}
	models, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(models), `"bench-model"`) {
		t.Errorf("models: %s", models)
	}

	body := `{"model":"bench-model","stream":true,"messages":[{"role":"user","content":"go"}],"tools":[{"type":"function","function":{"name":"read"}}]}`
	wants := []struct {
		status int
		has    string
	}{
		{200, `"name":"read"`},
		{429, `"rate_limit_error"`},
		{200, `data: [DONE]`},
		{200, `"content":"not"`},
		{200, `"content":"not"`},
	}
	for i, w := range wants {
		status, got := chat(t, url, body)
		if status != w.status || !strings.Contains(got, w.has) {
			t.Errorf("request %d: %d %q, want %d with %q", i, status, got, w.status, w.has)
		}
	}
	if err := stop(); err != nil {
		t.Fatalf("run: %v", err)
	}
	if resp, err := get(t, url+"/models"); err == nil {
		resp.Body.Close()
		t.Error("server still answers after stop")
	}

	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	if len(lines) != 1+len(wants) {
		t.Fatalf("log has %d lines, want %d:\n%s", len(lines), 1+len(wants), data)
	}
	var l logLine
	if err := json.Unmarshal(lines[1], &l); err != nil {
		t.Fatal(err)
	}
	if l.TS == 0 || l.Method != "POST" || l.Path != "/v1/chat/completions" || l.Bytes != len(body) ||
		l.Model != "bench-model" || !l.Stream || l.Messages != 1 || len(l.Tools) != 1 || l.Tools[0] != "read" {
		t.Errorf("log line %s", lines[1])
	}
}

func TestRunErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"replies": [{"txt": "typo"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		args  []string
		usage bool
		want  string
	}{
		{name: "unknown flag", args: []string{"--nope"}, usage: true, want: "nope"},
		{name: "stray argument", args: []string{"extra"}, usage: true, want: "extra"},
		{name: "missing script", args: []string{"--script", filepath.Join(dir, "none.json")}, want: "none.json"},
		{name: "bad script", args: []string{"--script", bad}, want: "txt"},
		{name: "bad address", args: []string{"--addr", "256.0.0.1:x"}, want: "listen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout bytes.Buffer
			err := run(t.Context(), tt.args, &stdout, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.want)
			}
			if errors.As(err, new(usageError)) != tt.usage {
				t.Errorf("usage error = %v, want %v", !tt.usage, tt.usage)
			}
			if stdout.Len() != 0 {
				t.Errorf("printed %q before failing", stdout.String())
			}
		})
	}
}

func TestRunWithoutScript(t *testing.T) {
	t.Parallel()
	url, _ := start(t, "--models", "a,b")
	status, got := chat(t, url, `{"model":"x","messages":[]}`)
	if status != 200 || !strings.Contains(got, `"content":"ok"`) {
		t.Errorf("default reply: %d %s", status, got)
	}
	resp, err := get(t, url+"/models/b")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/models/b: status %d", resp.StatusCode)
	}
}

func TestRunCloseConnections(t *testing.T) {
	t.Parallel()
	url, _ := start(t, "--close-connections")
	resp, err := get(t, url+"/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !resp.Close {
		t.Error("with --close-connections the answer does not close its connection")
	}
}
