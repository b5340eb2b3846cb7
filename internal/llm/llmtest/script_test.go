package llmtest

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseScript(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		json    string
		want    *Script
		wantErr string
	}{
		{
			name: "replies and failures",
			json: `{"replies": [
				{"text": "hi", "reasoning": "r"},
				{"toolCalls": [{"id": "c1", "name": "read", "arguments": "{\"path\":\"a\"}"}], "usage": {"prompt_tokens": 10, "completion_tokens": 2, "cached_tokens": 8}},
				{"status": 429, "retryAfter": "3", "body": "slow down"},
				{"cutMidArguments": true, "hang": true, "errorEvent": "boom", "finishReason": "length", "pieces": 2}
			]}`,
			want: &Script{Replies: []Reply{
				{Text: "hi", Reasoning: "r"},
				{ToolCalls: []ToolCall{{ID: "c1", Name: "read", Arguments: `{"path":"a"}`}}, Usage: &Usage{PromptTokens: 10, CompletionTokens: 2, CachedTokens: 8}},
				{Status: 429, RetryAfter: "3", Body: "slow down"},
				{CutMidArguments: true, Hang: true, ErrorEvent: "boom", FinishReason: "length", Pieces: 2},
			}},
		},
		{
			name: "chunk delay forms",
			json: `{"models": ["m1", "m2"], "replies": [{"chunkDelayMs": 20}, {"chunkDelay": "1.5s"}, {"chunkDelay": 1000}, {"chunkDelayMs": 0.5}], "fallback": {"text": "bye"}}`,
			want: &Script{
				Models:   []string{"m1", "m2"},
				Replies:  []Reply{{ChunkDelay: 20 * time.Millisecond}, {ChunkDelay: 1500 * time.Millisecond}, {ChunkDelay: 1000}, {ChunkDelay: 500 * time.Microsecond}},
				Fallback: &Reply{Text: "bye"},
			},
		},
		{name: "unknown reply key", json: `{"replies": [{"txt": "typo"}]}`, wantErr: `unknown field "txt"`},
		{name: "unknown script key", json: `{"replies": [], "turns": []}`, wantErr: `unknown field "turns"`},
		{name: "bad delay", json: `{"replies": [{"chunkDelay": "soon"}]}`, wantErr: "chunkDelay"},
		{name: "trailing text", json: `{"replies": []} {}`, wantErr: "after the script"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseScript([]byte(tt.json))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestReplyJSONRoundTrip(t *testing.T) {
	t.Parallel()
	in := Reply{Text: "t", ToolCalls: []ToolCall{{Name: "n", Arguments: "{}"}}, ChunkDelay: 3 * time.Millisecond, Status: 500}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out Reply
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("%s came back as %+v", data, out)
	}
}

func TestLoadScriptAndReplayFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(`{"replies": [{"text": "one"}, {"text": "two"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	replies, err := LoadScript(script)
	if err != nil || len(replies) != 2 || replies[1].Text != "two" {
		t.Fatalf("LoadScript = %+v, %v", replies, err)
	}
	if _, err := LoadScript(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("LoadScript of a missing file succeeded")
	}

	// A recorded stream is replayed byte for byte, event by event.
	recorded := "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n" +
		"event: error\ndata: {\"error\":{\"message\":\"mid-stream\"}}\n\n"
	sse := filepath.Join(dir, "rec.sse")
	if err := os.WriteFile(sse, []byte(recorded), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := ReplayFile(sse)
	if err != nil {
		t.Fatal(err)
	}
	rep.ChunkDelay = time.Millisecond
	s := NewServer(rep)
	defer s.Close()
	resp := post(t, t.Context(), s, chatBody(true, false))
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != recorded || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("replayed %q (%s), want %q", got, resp.Header.Get("Content-Type"), recorded)
	}
}
