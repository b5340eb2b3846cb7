package tui

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/mx-claw/mx-claw/internal/attach"
)

// mentionWS makes a workspace for the @path tests.
func mentionWS(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range map[string]string{
		"main.go":           "package main\n\nfunc main() {}\n",
		"main_test.go":      "package main\n",
		"internal/a/a.go":   "package a\n",
		"internal/b.go":     "package internal\n",
		".gitignore":        "build/\n*.log\n",
		"build/out.txt":     "built\n",
		"debug.log":         "log\n",
		".git/config":       "[core]\n",
		"img.png":           "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		"docs/readme.md":    "# Readme\n",
		"docs/guide.md":     "# Guide\n",
		"docs/nested/x.txt": "x\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestMentionCandidates(t *testing.T) {
	root := mentionWS(t)
	for _, tc := range []struct {
		word string
		want []string
	}{
		{"@ma", []string{"@main.go", "@main_test.go"}},
		{"@", []string{"@docs/", "@img.png", "@internal/", "@main.go", "@main_test.go"}},
		{"@in", []string{"@internal/"}},
		{"@internal/", []string{"@internal/a/", "@internal/b.go"}},
		{"@docs/g", []string{"@docs/guide.md"}},
		{"@.g", []string{"@.gitignore"}},
		{"@bu", nil},
		{"@../", nil},
		{"@/etc/", nil},
		{"@nothing", nil},
	} {
		if got := mentionCandidates(root, tc.word); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("mentionCandidates(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}

func TestAttachMentions(t *testing.T) {
	root := mentionWS(t)
	send, atts, refused := attachMentions(root, "explain @main.go and @docs/readme.md, also @someone")
	want := "explain @main.go and @docs/readme.md, also @someone" +
		"\n\n<file path=\"main.go\">\npackage main\n\nfunc main() {}\n</file>" +
		"\n\n<file path=\"docs/readme.md\">\n# Readme\n</file>"
	if send != want {
		t.Errorf("sent\n%q\nwant\n%q", send, want)
	}
	if len(atts) != 2 || atts[0].rel != "main.go" || atts[0].lines != 3 || atts[1].rel != "docs/readme.md" || atts[1].lines != 1 {
		t.Errorf("attachments = %+v", atts)
	}
	if len(refused) != 0 {
		t.Errorf("refused = %q", refused)
	}
}

func TestAttachMentionsRefusesOutsideAndBinary(t *testing.T) {
	root := mentionWS(t)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(root, outside)
	text := "look at @" + outside + " @" + filepath.ToSlash(rel) + " @link.txt @out/secret.txt @img.png @docs"
	send, atts, refused := attachMentions(root, text)
	if send != text || len(atts) != 0 {
		t.Errorf("attached something: %q %+v", send, atts)
	}
	if strings.Contains(send, "secret\n") {
		t.Error("the outside file's content was attached")
	}
	// @img.png is left to imageMentions, which sends it as an image.
	want := []string{"outside the workspace", "outside the workspace", "outside the workspace", "outside the workspace", "not a text file"}
	if len(refused) != len(want) {
		t.Fatalf("refused = %q", refused)
	}
	for i, w := range want {
		if !strings.Contains(refused[i], w) {
			t.Errorf("refused[%d] = %q, want %q", i, refused[i], w)
		}
	}
}

func TestAttachMentionsCapsLargeFiles(t *testing.T) {
	root := t.TempDir()
	big := strings.Repeat("0123456789abcdef\n", 8000) // 136,000 bytes
	if err := os.WriteFile(filepath.Join(root, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	send, atts, _ := attachMentions(root, "@big.txt")
	if len(atts) != 1 {
		t.Fatalf("attachments = %+v", atts)
	}
	if !strings.Contains(send, "[truncated: only the first 64 KiB of 136000 bytes are attached]") || len(send) > attach.MaxBytes+200 {
		t.Errorf("not capped: %d bytes, tail %q", len(send), send[len(send)-120:])
	}
}

// TestMentionInTheUI completes a path with Tab and sends a message with
// the file attached.
func TestMentionInTheUI(t *testing.T) {
	h := newHarness(t, 80, 24)
	root := mentionWS(t)
	h.m.backend = wsBackend{h.b, root}
	for _, r := range "explain @mai" {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	h.send(tea.KeyPressMsg{Code: tea.KeyTab})
	if v := h.m.input.Value(); v != "explain @main" {
		t.Fatalf("after Tab: %q", v)
	}
	h.send(tea.KeyPressMsg{Code: '.', Text: "."})
	h.send(tea.KeyPressMsg{Code: tea.KeyTab})
	if v := h.m.input.Value(); v != "explain @main.go " {
		t.Fatalf("after the second Tab: %q", v)
	}
	h.send(tea.KeyPressMsg{Code: tea.KeyEnter})
	var runs []string
	for deadline := time.Now().Add(2 * time.Second); len(runs) == 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		h.b.mu.Lock()
		runs = append([]string(nil), h.b.runs...)
		h.b.mu.Unlock()
	}
	if len(runs) != 1 || !strings.Contains(runs[0], "<file path=\"main.go\">\npackage main\n") || !strings.HasPrefix(runs[0], "explain @main.go\n\n<file") {
		t.Errorf("runs = %q", runs)
	}
	out := strings.Join(h.printed, "\n")
	if !strings.Contains(out, "explain @main.go") || !strings.Contains(out, "attached: main.go (3 lines)") {
		t.Errorf("printed:\n%s", out)
	}
}

// wsBackend is the fake backend on a real workspace.
type wsBackend struct {
	*fakeBackend
	ws string
}

func (w wsBackend) Workspace() string { return w.ws }
