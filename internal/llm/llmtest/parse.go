package llmtest

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// parseChat reads a chat-completions request body.
//
// It is a small hand-written JSON reader rather than encoding/json because
// agent requests repeat the whole history: by the end of a 200-step
// benchmark each body is hundreds of kilobytes, and encoding/json (which
// validates the body, then decodes it, then every content again) took
// about 1 ms per 80 KB, time the benchmark would charge to the agent. This
// reader skips what it does not need at memchr speed and returns strings
// without escapes as substrings of the body.
//
// It agrees with encoding/json on every body that encoding/json accepts
// (keys match case-insensitively, null leaves a string, bool or number
// field alone, invalid UTF-8 and lone surrogates become U+FFFD; the tests
// compare the two), and rejects bodies that are not well-formed JSON,
// though it is laxer about number syntax and control characters in
// strings.
func parseChat(body string) (*ChatRequest, error) {
	p := &chatParser{s: body}
	c := &ChatRequest{}
	if !p.null() {
		p.object(func(key string) { p.chatField(c, key) })
	}
	p.ws()
	if p.err == nil && p.i < len(p.s) {
		p.fail("text after the request object")
	}
	if p.err != nil {
		return nil, p.err
	}
	c.NumMessages = len(c.Messages)
	return c, nil
}

// maxDepth bounds the nesting the parser follows, as in encoding/json.
const maxDepth = 10000

// chatParser is the state of parseChat. After the first error, err is
// set and i is at the end of s, so every loop stops.
type chatParser struct {
	s     string
	i     int
	depth int
	err   error
}

func (p *chatParser) chatField(c *ChatRequest, key string) {
	switch {
	case eq(key, "model"):
		p.str(&c.Model)
	case eq(key, "stream"):
		p.boolean(&c.Stream)
	case eq(key, "stream_options"):
		if p.null() {
			c.IncludeUsage = false
			return
		}
		p.object(func(k string) {
			if eq(k, "include_usage") {
				p.boolean(&c.IncludeUsage)
			} else {
				p.skip()
			}
		})
	case eq(key, "max_tokens"):
		p.integer(&c.MaxTokens)
	case eq(key, "max_completion_tokens"):
		p.integer(&c.MaxCompletionTokens)
	case eq(key, "messages"):
		c.Messages = nil
		if !p.null() {
			p.array(func() {
				var m ChatMessage
				p.message(&m)
				c.Messages = append(c.Messages, m)
			})
		}
	case eq(key, "tools"):
		c.Tools = nil
		if !p.null() {
			p.array(func() { c.Tools = append(c.Tools, p.toolName()) })
		}
	default:
		p.skip()
	}
}

func (p *chatParser) message(m *ChatMessage) {
	if p.null() {
		return
	}
	p.object(func(k string) {
		switch {
		case eq(k, "role"):
			p.str(&m.Role)
		case eq(k, "content"):
			m.Content = p.content()
		case eq(k, "reasoning_content"):
			p.str(&m.Reasoning)
		case eq(k, "name"):
			p.str(&m.Name)
		case eq(k, "tool_call_id"):
			p.str(&m.ToolCallID)
		case eq(k, "tool_calls"):
			m.ToolCalls = nil
			if !p.null() {
				p.array(func() {
					var tc ToolCall
					p.toolCall(&tc)
					m.ToolCalls = append(m.ToolCalls, tc)
				})
			}
		default:
			p.skip()
		}
	})
}

// content reads a message content (see ChatMessage.Content).
func (p *chatParser) content() string {
	p.ws()
	switch p.peek() {
	case 'n':
		p.lit("null")
		return ""
	case '"':
		return p.string()
	case '[':
		var b strings.Builder
		p.array(func() {
			p.ws()
			if p.peek() != '{' {
				p.skip()
				return
			}
			text := ""
			p.object(func(k string) {
				p.ws()
				if eq(k, "text") && p.peek() == '"' {
					text = p.string()
				} else {
					p.skip()
				}
			})
			b.WriteString(text)
		})
		return b.String()
	default:
		start := p.i
		p.skip()
		return p.s[start:p.i]
	}
}

func (p *chatParser) toolCall(tc *ToolCall) {
	if p.null() {
		return
	}
	p.object(func(k string) {
		switch {
		case eq(k, "id"):
			p.str(&tc.ID)
		case eq(k, "function"):
			if p.null() {
				return
			}
			p.object(func(k string) {
				switch {
				case eq(k, "name"):
					p.str(&tc.Name)
				case eq(k, "arguments"):
					tc.Arguments = p.rawText()
				default:
					p.skip()
				}
			})
		default:
			p.skip()
		}
	})
}

// toolName reads one entry of "tools": function.name, or name.
func (p *chatParser) toolName() string {
	var name, fname string
	if p.null() {
		return ""
	}
	p.object(func(k string) {
		switch {
		case eq(k, "name"):
			p.str(&name)
		case eq(k, "function"):
			if p.null() {
				return
			}
			p.object(func(k string) {
				if eq(k, "name") {
					p.str(&fname)
				} else {
					p.skip()
				}
			})
		default:
			p.skip()
		}
	})
	if fname != "" {
		return fname
	}
	return name
}

// rawText reads a string's text, "" for null, or any other value's raw
// JSON.
func (p *chatParser) rawText() string {
	p.ws()
	switch p.peek() {
	case 'n':
		p.lit("null")
		return ""
	case '"':
		return p.string()
	default:
		start := p.i
		p.skip()
		return p.s[start:p.i]
	}
}

// eq reports whether a key names a field, the way encoding/json matches.
func eq(key, field string) bool {
	return key == field || strings.EqualFold(key, field)
}

func (p *chatParser) fail(msg string) {
	if p.err == nil {
		p.err = fmt.Errorf("invalid JSON at offset %d: %s", p.i, msg)
	}
	p.i = len(p.s)
}

func (p *chatParser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// peek returns the next byte, or 0 at the end.
func (p *chatParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// consume skips c if it comes next, after white space.
func (p *chatParser) consume(c byte) bool {
	p.ws()
	if p.peek() == c {
		p.i++
		return true
	}
	return false
}

// null skips a null if it comes next.
func (p *chatParser) null() bool {
	p.ws()
	if strings.HasPrefix(p.s[p.i:], "null") {
		p.i += 4
		return true
	}
	return false
}

func (p *chatParser) lit(word string) {
	if !strings.HasPrefix(p.s[p.i:], word) {
		p.fail("want " + word)
		return
	}
	p.i += len(word)
}

// object reads an object, calling f with each key; f reads the value.
func (p *chatParser) object(f func(key string)) {
	if !p.consume('{') {
		p.fail("want an object")
		return
	}
	if p.depth++; p.depth > maxDepth {
		p.fail("nested too deeply")
		return
	}
	if p.consume('}') {
		p.depth--
		return
	}
	for p.err == nil {
		p.ws()
		if p.peek() != '"' {
			p.fail("want a key")
			return
		}
		key := p.string()
		if !p.consume(':') {
			p.fail("want :")
			return
		}
		f(key)
		if p.consume(',') {
			continue
		}
		if p.consume('}') {
			p.depth--
			return
		}
		p.fail("want , or }")
	}
}

// array reads an array, calling f for each element; f reads it.
func (p *chatParser) array(f func()) {
	if !p.consume('[') {
		p.fail("want an array")
		return
	}
	if p.depth++; p.depth > maxDepth {
		p.fail("nested too deeply")
		return
	}
	if p.consume(']') {
		p.depth--
		return
	}
	for p.err == nil {
		f()
		if p.consume(',') {
			continue
		}
		if p.consume(']') {
			p.depth--
			return
		}
		p.fail("want , or ]")
	}
}

// skip reads any value.
func (p *chatParser) skip() {
	p.ws()
	switch c := p.peek(); {
	case c == '"':
		p.skipString()
	case c == '{':
		p.object(func(string) { p.skip() })
	case c == '[':
		p.array(func() { p.skip() })
	case c == 't':
		p.lit("true")
	case c == 'f':
		p.lit("false")
	case c == 'n':
		p.lit("null")
	case c == '-' || '0' <= c && c <= '9':
		p.number()
	default:
		p.fail("want a value")
	}
}

// number reads a number token and returns it.
func (p *chatParser) number() string {
	start := p.i
	for p.i < len(p.s) && strings.IndexByte("+-0123456789.eE", p.s[p.i]) >= 0 {
		p.i++
	}
	if p.i == start {
		p.fail("want a number")
	}
	return p.s[start:p.i]
}

// str reads a string into dst; null leaves dst alone.
func (p *chatParser) str(dst *string) {
	if p.null() {
		return
	}
	if p.peek() != '"' {
		p.fail("want a string")
		return
	}
	*dst = p.string()
}

// boolean reads a bool into dst; null leaves dst alone.
func (p *chatParser) boolean(dst *bool) {
	p.ws()
	switch {
	case p.null():
	case strings.HasPrefix(p.s[p.i:], "true"):
		p.i += 4
		*dst = true
	case strings.HasPrefix(p.s[p.i:], "false"):
		p.i += 5
		*dst = false
	default:
		p.fail("want a bool")
	}
}

// integer reads an integer into dst; null leaves dst alone.
func (p *chatParser) integer(dst *int) {
	if p.null() {
		return
	}
	n, err := strconv.Atoi(p.number())
	if err != nil {
		p.fail("want an integer")
		return
	}
	*dst = n
}

// skipString skips the string that starts at p.i.
func (p *chatParser) skipString() {
	open := p.i
	for i := open + 1; ; {
		j := strings.IndexByte(p.s[i:], '"')
		if j < 0 {
			p.fail("unterminated string")
			return
		}
		end := i + j
		backslashes := 0
		for k := end - 1; k > open && p.s[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			p.i = end + 1
			return
		}
		i = end + 1
	}
}

// string reads the string that starts at p.i and returns its text.
func (p *chatParser) string() string {
	start := p.i + 1
	j := strings.IndexByte(p.s[start:], '"')
	if j < 0 {
		p.fail("unterminated string")
		return ""
	}
	if seg := p.s[start : start+j]; strings.IndexByte(seg, '\\') < 0 && utf8.ValidString(seg) {
		p.i = start + j + 1
		return seg
	}
	// Find the end first (at memchr speed) so that the text is built in
	// one allocation.
	if p.skipString(); p.err != nil {
		return ""
	}
	return p.unquote(start, p.i-1)
}

// unquote decodes the quoted text s[start:end] (which has escapes or
// invalid UTF-8) as encoding/json does, and moves past the closing quote.
func (p *chatParser) unquote(start, end int) string {
	var b strings.Builder
	b.Grow(end - start)
	seg := p.s[start:end]
	valid := utf8.ValidString(seg)
	for len(seg) > 0 {
		// Copy up to the next escape, or the next non-ASCII byte when
		// the text is not valid UTF-8.
		k := strings.IndexByte(seg, '\\')
		if !valid {
			k = 0
			for k < len(seg) && seg[k] != '\\' && seg[k] < utf8.RuneSelf {
				k++
			}
		} else if k < 0 {
			k = len(seg)
		}
		b.WriteString(seg[:k])
		seg = seg[k:]
		switch {
		case seg == "":
		case seg[0] == '\\':
			n := unescape(&b, seg)
			if n < 0 {
				p.i = end - len(seg)
				p.fail("bad escape")
				return ""
			}
			seg = seg[n:]
		default:
			r, size := utf8.DecodeRuneInString(seg)
			b.WriteRune(r) // U+FFFD for invalid UTF-8
			seg = seg[size:]
		}
	}
	p.i = end + 1
	return b.String()
}

// unescape writes the escape at the start of s to b and returns its
// length, or -1 if it is not valid.
func unescape(b *strings.Builder, s string) int {
	if len(s) < 2 {
		return -1
	}
	switch e := s[1]; e {
	case '"', '\\', '/':
		b.WriteByte(e)
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'u':
		r := hex4(s)
		if r < 0 {
			return -1
		}
		n := 6
		if utf16.IsSurrogate(r) {
			// A valid pair is one rune; anything else is U+FFFD.
			if dec := utf16.DecodeRune(r, hex4(s[6:])); dec != unicode.ReplacementChar {
				r = dec
				n += 6
			} else {
				r = unicode.ReplacementChar
			}
		}
		b.WriteRune(r)
		return n
	default:
		return -1
	}
	return 2
}

// hex4 decodes the \uXXXX escape at the start of s, or returns -1.
func hex4(s string) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r*16 + c
	}
	return r
}
