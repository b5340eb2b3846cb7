package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// parseChatStd is the reference for parseChat: the same reading done with
// encoding/json.
func parseChatStd(body []byte) (*ChatRequest, error) {
	var w struct {
		Model         string `json:"model"`
		Stream        bool   `json:"stream"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		MaxTokens           int `json:"max_tokens"`
		MaxCompletionTokens int `json:"max_completion_tokens"`
		Messages            []struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			Reasoning string          `json:"reasoning_content"`
			Name      string          `json:"name"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
		Tools []struct {
			Name     string `json:"name"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, err
	}
	c := &ChatRequest{
		Model:               w.Model,
		Stream:              w.Stream,
		IncludeUsage:        w.StreamOptions != nil && w.StreamOptions.IncludeUsage,
		MaxTokens:           w.MaxTokens,
		MaxCompletionTokens: w.MaxCompletionTokens,
		NumMessages:         len(w.Messages),
	}
	for _, m := range w.Messages {
		cm := ChatMessage{Role: m.Role, Content: stdContent(m.Content), Reasoning: m.Reasoning, Name: m.Name, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			cm.ToolCalls = append(cm.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: stdText(tc.Function.Arguments)})
		}
		c.Messages = append(c.Messages, cm)
	}
	for _, t := range w.Tools {
		name := t.Function.Name
		if name == "" {
			name = t.Name
		}
		c.Tools = append(c.Tools, name)
	}
	return c, nil
}

// stdContent flattens a content as documented on ChatMessage.Content.
func stdContent(raw json.RawMessage) string {
	if len(raw) == 0 || raw[0] != '[' {
		return stdText(raw)
	}
	var parts []json.RawMessage
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, part := range parts {
		var p struct{ Text json.RawMessage }
		if json.Unmarshal(part, &p) != nil || len(p.Text) == 0 || p.Text[0] != '"' {
			continue
		}
		b.WriteString(stdText(p.Text))
	}
	return b.String()
}

// stdText is a string's text, "" for null, or the raw JSON.
func stdText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// normalize makes empty slices nil, where the two readers may differ.
func normalize(c *ChatRequest) *ChatRequest {
	if c == nil {
		return nil
	}
	out := *c
	if len(out.Messages) == 0 {
		out.Messages = nil
	}
	if len(out.Tools) == 0 {
		out.Tools = nil
	}
	out.Messages = append([]ChatMessage(nil), out.Messages...)
	for i := range out.Messages {
		if len(out.Messages[i].ToolCalls) == 0 {
			out.Messages[i].ToolCalls = nil
		}
	}
	return &out
}

// hasDuplicateKeys reports whether an object in the JSON text has two keys
// that encoding/json would match to the same field; encoding/json then
// merges in ways parseChat does not copy.
func hasDuplicateKeys(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		keys  map[string]bool
		inObj bool
		isKey bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) || err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.inObj && top.isKey {
			if d, ok := tok.(json.Delim); !ok || d != '}' {
				k := strings.ToLower(tok.(string))
				if top.keys[k] {
					return true
				}
				top.keys[k] = true
				top.isKey = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, inObj: true, isKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: the next token of an enclosing object is a key.
		if len(stack) > 0 && stack[len(stack)-1].inObj {
			stack[len(stack)-1].isKey = true
		}
	}
}

// checkParse compares parseChat with the encoding/json reference.
func checkParse(t *testing.T, body []byte) {
	t.Helper()
	want, wantErr := parseChatStd(body)
	got, err := parseChat(string(body))
	if wantErr != nil {
		return // parseChat may be laxer
	}
	if err != nil {
		t.Fatalf("parseChat(%q): %v; encoding/json accepts it", body, err)
	}
	if !reflect.DeepEqual(normalize(got), normalize(want)) {
		t.Fatalf("parseChat(%q)\n got %#v\nwant %#v", body, normalize(got), normalize(want))
	}
}

func TestParseChat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		body    string
		wantErr bool
	}{
		{name: "typical", body: chatBody(true, true)},
		{name: "null body", body: `null`},
		{name: "empty object", body: ` { } `},
		{name: "white space everywhere", body: "{ \"model\" :\t\"m\" ,\r\n \"messages\" : [ { \"role\" : \"user\" , \"content\" : \"hi\" } ] , \"tools\" : [ ] }"},
		{name: "escapes", body: `{"messages":[{"role":"user","content":"a\"b\\c\/d\b\f\n\r\t \u00e9 \u2028 \ud83d\ude00 end"}]}`},
		{name: "lone and reversed surrogates", body: `{"model":"\ud800 \udc00\ud800 \ud800\u0041 x"}`},
		{name: "invalid UTF-8", body: "{\"model\":\"a\xffb\xc3\"}"},
		{name: "backslashes before quote", body: `{"model":"a\\\\","stream":true}`},
		{name: "null fields", body: `{"model":null,"stream":null,"stream_options":null,"max_tokens":null,"messages":[null,{"role":null,"content":null,"tool_calls":null}],"tools":[null,{"function":null}]}`},
		{name: "keys in other case", body: `{"Model":"m","STREAM":true,"Stream_Options":{"Include_Usage":true},"Messages":[{"Role":"user","Content":"x"}]}`},
		{name: "content parts", body: `{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}},{"text":5},null,7,{"TEXT":"b"}]}]}`},
		{name: "content of other types", body: `{"messages":[{"content":5},{"content":{"a":[1,2]}},{"content":true}]}`},
		{name: "tool calls", body: `{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},{"id":"c2","function":{"name":"g","arguments":{"a": [1, 2]}}},null]}]}`},
		{name: "tools by name", body: `{"tools":[{"type":"function","function":{"name":"a","parameters":{"type":"object","properties":{"x":{"type":"string","description":"q\"uote"}}}}},{"name":"b"},{"type":"custom","name":"c","function":{}}]}`},
		{name: "numbers", body: `{"max_tokens":-0,"max_completion_tokens":4096,"temperature":0.7e-3,"n":1E2}`},
		{name: "unknown nested values", body: `{"x":{"y":[[],{},[{"z":"\"]}"}],true,false,null,-1.5e10]},"model":"m"}`},
		{name: "truncated", body: `{"model":"m","messages":[{"role":"user","content":"hel`, wantErr: true},
		{name: "trailing text", body: `{"model":"m"} x`, wantErr: true},
		{name: "not an object", body: `["model"]`, wantErr: true},
		{name: "string for bool", body: `{"stream":"yes"}`, wantErr: true},
		{name: "float for int", body: `{"max_tokens":1.5}`, wantErr: true},
		{name: "bad escape", body: `{"model":"\x"}`, wantErr: true},
		{name: "bad unicode escape", body: `{"model":"\u12"}`, wantErr: true},
		{name: "missing colon", body: `{"model" "m"}`, wantErr: true},
		{name: "trailing comma", body: `{"model":"m",}`, wantErr: true},
		{name: "deep nesting", body: `{"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`, wantErr: true},
		{name: "empty", body: ``, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := parseChat(tt.body); (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if !tt.wantErr {
				checkParse(t, []byte(tt.body))
			}
		})
	}
}

// FuzzParseChatFields builds well-formed requests around arbitrary strings
// and checks parseChat against encoding/json.
func FuzzParseChatFields(f *testing.F) {
	f.Add("gpt-4o", "hello", "{\"path\":\"a.go\"}", "read", uint8(0))
	f.Add("m\u2028", "a\"b\\c\n\x01\xff", "not json", "ts\u00e9", uint8(7))
	f.Add("", "", "", "", uint8(255))
	f.Fuzz(func(t *testing.T, model, content, args, tool string, shape uint8) {
		var c any = content
		switch shape % 4 {
		case 1:
			c = []any{map[string]any{"type": "text", "text": content}, map[string]any{"text": args}}
		case 2:
			c = nil
		case 3:
			c = map[string]any{"weird": content}
		}
		var a any = args
		if shape&4 != 0 {
			a = map[string]any{"raw": args, "n": 1.5}
		}
		body, err := json.Marshal(map[string]any{
			"model": model, "stream": shape&8 != 0, "stream_options": map[string]any{"include_usage": shape&16 != 0},
			"max_tokens": int(shape),
			"messages": []any{
				map[string]any{"role": "user", "content": c, "name": tool},
				map[string]any{"role": "assistant", "content": nil, "reasoning_content": content, "tool_calls": []any{
					map[string]any{"id": tool, "type": "function", "function": map[string]any{"name": tool, "arguments": a}},
				}},
				map[string]any{"role": "tool", "tool_call_id": tool, "content": args},
			},
			"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": tool, "description": content}}},
		})
		if err != nil {
			t.Skip()
		}
		// Raw, non-ASCII-escaped and indented forms of the same body.
		checkParse(t, body)
		checkParse(t, bytes.ReplaceAll(body, []byte(`\u003c`), []byte(`<`)))
		var ind bytes.Buffer
		if json.Indent(&ind, body, " ", "\t") == nil {
			checkParse(t, ind.Bytes())
		}
	})
}

// FuzzParseChatBytes checks parseChat on arbitrary bytes: it must not
// panic, and on ASCII JSON without duplicate keys it must agree with
// encoding/json.
func FuzzParseChatBytes(f *testing.F) {
	f.Add([]byte(chatBody(true, true)))
	f.Add([]byte(`{"messages":[{"content":[{"text":"a"}],"tool_calls":[{"function":{"arguments":{}}}]}]}`))
	f.Add([]byte(`{"model":"\ud83d\ude00\u0000","x":[1,-2.5e3,true,null,"\\\""]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = parseChat(string(data))
		if !json.Valid(data) || hasDuplicateKeys(data) {
			return
		}
		for _, b := range data {
			if b >= utf8.RuneSelf {
				return
			}
		}
		checkParse(t, data)
	})
}

func BenchmarkParseChat(b *testing.B) {
	var msgs []map[string]any
	for i := range 40 {
		msgs = append(msgs, map[string]any{"role": "tool", "tool_call_id": "call_x", "content": strings.Repeat("line of a \"file\"\n", 80+i)})
	}
	body, _ := json.Marshal(map[string]any{"model": "m", "stream": true, "messages": msgs})
	b.Run("parseChat", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := parseChat(string(body)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := parseChatStd(body); err != nil {
				b.Fatal(err)
			}
		}
	})
}
