package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// answer sends rep as the answer to the chat request req.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, req *Request, rep *Reply) {
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	switch {
	case rep.Status != 0:
		writeStatus(w, rep)
	case rep.SSE != "":
		s.replay(w, r, rep)
	default:
		s.assignIDs(rep)
		a := s.newAnswer(req, rep)
		if req.Chat.Stream {
			s.stream(w, r, a)
		} else {
			s.complete(w, r, a)
		}
	}
}

// writeStatus answers with rep.Status and rep.Body.
func writeStatus(w http.ResponseWriter, rep *Reply) {
	body := []byte(rep.Body)
	if rep.Body == "" {
		msg := fmt.Sprintf("fakellm: scripted error (HTTP %d %s)", rep.Status, http.StatusText(rep.Status))
		body = errorBody(rep.Status, msg, errorType(rep.Status))
	}
	if json.Valid(body) {
		w.Header().Set("Content-Type", "application/json")
	} else {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	w.WriteHeader(rep.Status)
	_, _ = w.Write(body)
}

// assignIDs gives every tool call of rep without an ID one of its own,
// copying the calls so that the caller's Reply is left alone.
func (s *Server) assignIDs(rep *Reply) {
	missing := false
	for _, c := range rep.ToolCalls {
		missing = missing || c.ID == ""
	}
	if !missing {
		return
	}
	calls := append([]ToolCall(nil), rep.ToolCalls...)
	for i := range calls {
		if calls[i].ID == "" {
			calls[i].ID = "call_" + strconv.FormatInt(s.nextCall.Add(1), 10)
		}
	}
	rep.ToolCalls = calls
}

// answerInfo is what every form of an answer needs.
type answerInfo struct {
	rep          *Reply
	id           string // chatcmpl-...
	created      int64
	model        string
	usage        Usage
	includeUsage bool
}

func (s *Server) newAnswer(req *Request, rep *Reply) *answerInfo {
	return &answerInfo{
		rep:          rep,
		id:           "chatcmpl-fake" + strconv.FormatInt(s.nextChat.Add(1), 10),
		created:      req.Time.Unix(),
		model:        s.model(req),
		usage:        rep.usage(req.Size),
		includeUsage: req.Chat.IncludeUsage,
	}
}

// Non-streaming wire shapes.
type (
	wireCompletion struct {
		ID          string       `json:"id"`
		Object      string       `json:"object"`
		Created     int64        `json:"created"`
		Model       string       `json:"model"`
		Fingerprint string       `json:"system_fingerprint"`
		Choices     []wireChoice `json:"choices"`
		Usage       wireUsage    `json:"usage"`
	}
	wireChoice struct {
		Index        int         `json:"index"`
		Message      wireMessage `json:"message"`
		Logprobs     *struct{}   `json:"logprobs"`
		FinishReason string      `json:"finish_reason"`
	}
	wireMessage struct {
		Role      string         `json:"role"`
		Content   *string        `json:"content"`
		Reasoning string         `json:"reasoning_content,omitempty"`
		ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
	}
	wireToolCall struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	wireUsage struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
		CompletionTokensDetails struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	}
)

// complete sends a as one chat.completion object.
func (s *Server) complete(w http.ResponseWriter, r *http.Request, a *answerInfo) {
	rep := a.rep
	if rep.Gate != nil {
		s.await(r, rep.Gate)
	}
	if rep.Hang {
		s.hang(r)
	}
	if rep.ChunkDelay > 0 {
		s.pause(r, rep.ChunkDelay, nil)
	}
	if rep.ErrorEvent != "" {
		writeError(w, http.StatusInternalServerError, rep.ErrorEvent, "server_error")
		return
	}
	msg := wireMessage{Role: "assistant", Reasoning: rep.Reasoning}
	if rep.Text != "" || len(rep.ToolCalls) == 0 {
		msg.Content = &rep.Text
	}
	for _, c := range rep.ToolCalls {
		tc := wireToolCall{ID: c.ID, Type: "function"}
		tc.Function.Name, tc.Function.Arguments = c.Name, c.Arguments
		msg.ToolCalls = append(msg.ToolCalls, tc)
	}
	u := wireUsage{
		PromptTokens:     a.usage.PromptTokens,
		CompletionTokens: a.usage.CompletionTokens,
		TotalTokens:      a.usage.PromptTokens + a.usage.CompletionTokens,
	}
	u.PromptTokensDetails.CachedTokens = a.usage.CachedTokens
	u.CompletionTokensDetails.ReasoningTokens = a.usage.ReasoningTokens
	data, err := json.Marshal(wireCompletion{
		ID: a.id, Object: "chat.completion", Created: a.created, Model: a.model,
		Fingerprint: "fp_fakellm",
		Choices:     []wireChoice{{Message: msg, FinishReason: rep.finishReason()}},
		Usage:       u,
	})
	if err != nil {
		panic(err) // our own wire types always marshal
	}
	w.Header().Set("Content-Type", "application/json")
	if !rep.CutMidArguments {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(data)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data[:len(data)/2])
	_ = http.NewResponseController(w).Flush()
	panic(http.ErrAbortHandler)
}

// replay sends rep.SSE verbatim, flushing after each event.
func (s *Server) replay(w http.ResponseWriter, r *http.Request, rep *Reply) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	var t *time.Timer
	for rest, first := rep.SSE, true; rest != ""; first = false {
		n := strings.Index(rest, "\n\n")
		if n < 0 {
			n = len(rest)
		} else {
			n += 2
		}
		if !first && rep.ChunkDelay > 0 {
			if t == nil {
				t = time.NewTimer(rep.ChunkDelay)
				defer t.Stop()
			}
			s.pause(r, rep.ChunkDelay, t)
		}
		if _, err := io.WriteString(w, rest[:n]); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
		rest = rest[n:]
	}
}
