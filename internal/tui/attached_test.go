package tui

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSplitAttachmentsUndoesAttach expands mentions as a message is sent
// and splits the stored text again: the typed text and the files come
// back, also when a file contains the closing tag itself.
func TestSplitAttachmentsUndoesAttach(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.go"), []byte("package a\n\nconst s = \"</file>\"\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "b.txt"), []byte("one line"), 0o644)
	typed := "explain @a.go and @b.txt"
	sent, atts, _ := attachMentions(ws, typed)
	if len(atts) != 2 {
		t.Fatalf("%d attachments", len(atts))
	}
	text, got := splitAttachments(sent)
	if text != typed {
		t.Errorf("typed text %q, want %q", text, typed)
	}
	if len(got) != 2 || got[0].rel != "a.go" || got[0].lines != 3 || got[1].rel != "b.txt" || got[1].lines != 1 {
		t.Errorf("attachments %+v", got)
	}
	plain := "no files here <file path=\"x\"> just text"
	if text, got := splitAttachments(plain); text != plain || got != nil {
		t.Errorf("plain text split into %q, %+v", text, got)
	}
}
