package openai

import (
	"strconv"
	"unicode/utf8"

	"github.com/mx-claw/mx-claw/internal/llm"
)

// emptySchema is sent for a tool whose Parameters are empty.
const emptySchema = `{"type":"object","properties":{}}`

// appendRequest appends the JSON body of req to dst.
//
// The body is written by hand rather than through encoding/json: it is
// built on every agent step, grows with the transcript, and carries the
// tool schemas (often 20-40 KB) that only need copying. Tool parameters
// are copied as they are and must be valid JSON.
func appendRequest(dst []byte, req *llm.Request) []byte {
	dst = append(dst, `{"model":`...)
	dst = appendString(dst, req.Model)
	dst = append(dst, `,"messages":[`...)
	var toolImages []llm.Image
	for i := range req.Messages {
		m := &req.Messages[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendMessage(dst, m)
		if m.Role == "tool" {
			toolImages = append(toolImages, m.Images...)
			if next := i + 1; len(toolImages) > 0 && (next == len(req.Messages) || req.Messages[next].Role != "tool") {
				// Chat completions take images only from users: those
				// of the results just sent follow them.
				dst = append(dst, ',')
				dst = appendMessage(dst, &llm.Message{Role: "user", Content: toolImagesNote, Images: toolImages})
				toolImages = nil
			}
		}
	}
	dst = append(dst, ']')
	if len(req.Tools) > 0 {
		dst = append(dst, `,"tools":[`...)
		for i := range req.Tools {
			t := &req.Tools[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"type":"function","function":{"name":`...)
			dst = appendString(dst, t.Name)
			if t.Description != "" {
				dst = append(dst, `,"description":`...)
				dst = appendString(dst, t.Description)
			}
			dst = append(dst, `,"parameters":`...)
			if len(t.Parameters) == 0 {
				dst = append(dst, emptySchema...)
			} else {
				dst = append(dst, t.Parameters...)
			}
			dst = append(dst, "}}"...)
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"stream":true,"stream_options":{"include_usage":true}`...)
	if req.MaxTokens > 0 {
		dst = append(dst, `,"max_tokens":`...)
		dst = strconv.AppendInt(dst, int64(req.MaxTokens), 10)
	}
	return append(dst, '}')
}

// toolImagesNote introduces the images of tool results.
const toolImagesNote = "The images the tool calls above returned, in order:"

func appendMessage(dst []byte, m *llm.Message) []byte {
	dst = append(dst, `{"role":`...)
	dst = appendString(dst, m.Role)
	dst = append(dst, `,"content":`...)
	if len(m.Images) > 0 && m.Role != "tool" {
		dst = appendParts(dst, m)
	} else if m.Content == "" && len(m.ToolCalls) > 0 {
		dst = append(dst, "null"...)
	} else {
		dst = appendString(dst, m.Content)
	}
	if len(m.ToolCalls) > 0 {
		dst = append(dst, `,"tool_calls":[`...)
		for i := range m.ToolCalls {
			c := &m.ToolCalls[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"id":`...)
			dst = appendString(dst, c.ID)
			dst = append(dst, `,"type":"function","function":{"name":`...)
			dst = appendString(dst, c.Name)
			dst = append(dst, `,"arguments":`...)
			dst = appendString(dst, c.Arguments)
			dst = append(dst, "}}"...)
		}
		dst = append(dst, ']')
	}
	if m.ToolCallID != "" {
		dst = append(dst, `,"tool_call_id":`...)
		dst = appendString(dst, m.ToolCallID)
	}
	return append(dst, '}')
}

// appendParts appends a content array: the text, then each image as an
// OpenAI image_url part with a data: URL.
func appendParts(dst []byte, m *llm.Message) []byte {
	dst = append(dst, '[')
	if m.Content != "" {
		dst = append(dst, `{"type":"text","text":`...)
		dst = appendString(dst, m.Content)
		dst = append(dst, "},"...)
	}
	for i, img := range m.Images {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"type":"image_url","image_url":{"url":"data:`...)
		for _, c := range []byte(img.MIME) {
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '/' || c == '+' || c == '.' || c == '-' {
				dst = append(dst, c)
			}
		}
		dst = append(dst, ";base64,"...)
		for _, c := range []byte(img.Data) {
			// Base64's alphabet only: the text is copied into a JSON
			// string as it is.
			if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=' {
				dst = append(dst, c)
			}
		}
		dst = append(dst, `"}}`...)
	}
	return append(dst, ']')
}

// requestSize estimates the size of req's body, so that it is built in one
// allocation in the common case.
func requestSize(req *llm.Request) int {
	n := 128 + len(req.Model)
	for i := range req.Messages {
		m := &req.Messages[i]
		n += 48 + len(m.Role) + len(m.Content) + len(m.ToolCallID)
		for _, img := range m.Images {
			n += 160 + len(img.Data)
		}
		for _, c := range m.ToolCalls {
			n += 80 + len(c.ID) + len(c.Name) + len(c.Arguments)
		}
	}
	for i := range req.Tools {
		t := &req.Tools[i]
		n += 64 + len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	// Room for escapes (quotes and newlines in code and JSON arguments).
	return n + n/4
}

const hexDigits = "0123456789abcdef"

// le64 loads the first eight bytes of s as a little-endian word; the
// compiler turns it into one load.
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// hasSpecial reports whether any byte of x is one appendString cannot
// copy as it is: below 0x20, '"', '\\' or non-ASCII. It uses the
// classic word tricks ("Bit Twiddling Hacks": haszero and hasless), which
// are exact when asked whether any byte matches.
func hasSpecial(x uint64) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	less := (x - lo*0x20) & ^x
	quote := x ^ (lo * '"')
	quote = (quote - lo) & ^quote
	backslash := x ^ (lo * '\\')
	backslash = (backslash - lo) & ^backslash
	return (less|quote|backslash|x)&hi != 0
}

// plainASCII marks with a 1 the bytes appendString copies as they are:
// printable ASCII other than '"' and '\'.
const plainASCII = "" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x01\x01\x00\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" + // '"' is 0x22
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" +
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" +
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x00\x01\x01\x01" + // '\\' is 0x5c
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" +
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD,
// as with encoding/json; unlike encoding/json it does not escape <, > and
// &, which no model server needs.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Skip plain bytes fast, eight at a time while possible: they
		// are nearly all of a typical text.
		for i+8 <= len(s) && !hasSpecial(le64(s[i:])) {
			i += 8
		}
		for i < len(s) && plainASCII[s[i]] == 1 {
			i++
		}
		if i == len(s) {
			break
		}
		b := s[i]
		if b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			start = i + size
		case r == '\u2028' || r == '\u2029':
			// Valid JSON, but they break JavaScript parsers that some
			// gateways still use.
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			start = i + size
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
