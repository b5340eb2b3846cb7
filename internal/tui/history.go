package tui

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/mx-claw/mx-claw/internal/safefile"
)

// maxHistory is how many inputs the history keeps.
const maxHistory = 500

// inputHistory is the input history of a workspace, browsed with ↑/↓ and
// kept in a file of JSON strings, one a line, so multi-line inputs survive.
type inputHistory struct {
	path    string
	entries []string
	pos     int    // len(entries) when not browsing
	draft   string // what was typed before browsing
}

// loadHistory reads the history file; a missing or damaged file gives an
// empty history (losing old inputs is better than not starting).
func loadHistory(path string) *inputHistory {
	h := &inputHistory{path: path}
	if path != "" {
		if f, _, err := safefile.Open(path); err == nil {
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 64<<10), 4<<20)
			for sc.Scan() {
				var s string
				if json.Unmarshal(sc.Bytes(), &s) == nil && s != "" {
					h.entries = append(h.entries, s)
				}
			}
			f.Close()
		}
	}
	if n := len(h.entries); n > maxHistory {
		h.entries = h.entries[n-maxHistory:]
	}
	h.pos = len(h.entries)
	return h
}

// add records an input and appends it to the file. Writing is best
// effort: the REPL must not fail because its history cannot be saved.
func (h *inputHistory) add(s string) {
	h.pos = len(h.entries)
	if n := len(h.entries); n > 0 && h.entries[n-1] == s {
		return
	}
	h.entries = append(h.entries, s)
	if len(h.entries) > maxHistory {
		h.entries = h.entries[1:]
	}
	h.pos = len(h.entries)
	if h.path == "" {
		return
	}
	line, _ := json.Marshal(s)
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return
	}
	f, err := os.OpenFile(h.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(append(line, '\n'))
}

// prev returns the entry before the one shown; ok is false at the oldest.
func (h *inputHistory) prev(current string) (string, bool) {
	if h.pos == 0 {
		return "", false
	}
	if h.pos == len(h.entries) {
		h.draft = current
	}
	h.pos--
	return h.entries[h.pos], true
}

// next returns the entry after the one shown, or the draft past the end.
func (h *inputHistory) next() (string, bool) {
	if h.pos >= len(h.entries) {
		return "", false
	}
	h.pos++
	if h.pos == len(h.entries) {
		return h.draft, true
	}
	return h.entries[h.pos], true
}

// drop removes the latest entry equal to s, from memory and from the file:
// an input the hooks refused (a UserPromptSubmit block) is not kept.
func (h *inputHistory) drop(s string) {
	for i := len(h.entries) - 1; i >= 0; i-- {
		if h.entries[i] == s {
			h.entries = append(h.entries[:i], h.entries[i+1:]...)
			break
		}
	}
	h.pos = len(h.entries)
	if h.path == "" {
		return
	}
	data, err := os.ReadFile(h.path)
	if err != nil {
		return
	}
	want, _ := json.Marshal(s)
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		if bytes.Equal(bytes.TrimSuffix(lines[i], []byte("\n")), want) {
			lines = append(lines[:i], lines[i+1:]...)
			_ = os.WriteFile(h.path, bytes.Join(lines, nil), 0o600)
			return
		}
	}
}

// promptErased is implemented by a turn's error when its prompt was
// refused and must not be kept (agent.PromptBlockedError).
type promptErased interface{ PromptErased() bool }
