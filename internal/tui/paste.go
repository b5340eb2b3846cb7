package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"

	"github.com/mx-claw/mx-claw/internal/clipboard"
	"github.com/mx-claw/mx-claw/internal/images"
)

// pastedImageStore is a Backend that keeps pictures pasted from the
// clipboard with a session's data, so that they are removed with it.
type pastedImageStore interface {
	// PastedImageDir is the directory for the session's pasted pictures;
	// it may not exist yet.
	PastedImageDir(sessionID string) string
}

// pasteState holds the images pasted into the input. Each stands in the
// input as a placeholder ("[Image #1 shot.png]") that is edited and
// deleted like text; a message carries the images whose placeholders it
// still holds. Placeholders are numbered through the process, so one
// recalled from the history attaches its image again.
type pasteState struct {
	images []pastedImage
	n      int
	// read reads the clipboard's picture; the system clipboard if nil.
	read func(context.Context) (clipboard.Image, error)
	// hinted says why the clipboard cannot be read was told once.
	hinted bool
}

// pastedImage is an image file attached by pasting and its placeholder.
type pastedImage struct{ label, path string }

// clipboardMsg is the result of reading a picture from the clipboard: the
// file it was saved to. key is the key that asked (Ctrl+V), which pastes
// the clipboard's text instead when it holds no picture.
type clipboardMsg struct {
	path string
	err  error
	key  *tea.KeyPressMsg
}

// errNoPasteStore is the error when the Backend cannot keep pasted
// pictures.
var errNoPasteStore = errors.New("pictures from the clipboard cannot be kept for this session")

// attachPasted attaches an image file and returns its placeholder.
func (m *Model) attachPasted(path, name string) string {
	m.paste.n++
	label := fmt.Sprintf("[Image #%d %s]", m.paste.n, placeholderName(name))
	m.paste.images = append(m.paste.images, pastedImage{label, path})
	return label
}

// placeholderName is a file name fit for a placeholder: printable, without
// brackets, at most 40 characters.
func placeholderName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r == '[' || r == ']' || unicode.IsControl(r) {
			return '_'
		}
		return r
	}, clean(name))
	if rs := []rune(name); len(rs) > 40 {
		name = string(rs[:20]) + "…" + string(rs[len(rs)-19:])
	}
	return name
}

// pasteInput handles a paste into the input box. A paste of image file
// paths (a file dropped on the terminal) puts placeholders for the images
// in the input; an empty paste, which some terminals send for their paste
// key when the clipboard holds a picture and no text, reads the clipboard.
// Anything else is left to the input box as text (took is false).
func (m *Model) pasteInput(content string) (cmd tea.Cmd, took bool) {
	if content == "" {
		return m.readClipboard(nil), true
	}
	home, _ := os.UserHomeDir()
	files, ok := pastedFiles(m.backend.Workspace(), home, content)
	if !ok {
		return nil, false
	}
	parts := make([]string, len(files))
	for i, f := range files {
		parts[i] = f.word
		if f.image {
			parts[i] = m.attachPasted(f.path, filepath.Base(f.path))
		}
	}
	m.input.InsertString(strings.Join(parts, " ") + " ")
	return nil, true
}

// readClipboard reads the clipboard's picture into a file of the
// session's data, off the UI's goroutine.
func (m *Model) readClipboard(key *tea.KeyPressMsg) tea.Cmd {
	store, ok := m.backend.(pastedImageStore)
	read, sid, ctx := m.paste.read, m.sess.ID, m.ctx
	if read == nil {
		read = clipboard.Reader{}.Image
	}
	return func() tea.Msg {
		if !ok || sid == "" {
			return clipboardMsg{err: errNoPasteStore, key: key}
		}
		img, err := read(ctx)
		if err != nil {
			return clipboardMsg{err: err, key: key}
		}
		path, err := savePasted(store.PastedImageDir(sid), img.Data)
		return clipboardMsg{path: path, err: err, key: key}
	}
}

// savePasted writes a picture from the clipboard to a new file in dir.
func savePasted(dir string, data []byte) (string, error) {
	ext := map[string]string{"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}[images.Sniff(data)]
	if ext == "" {
		return "", fmt.Errorf("%w (what it holds is not a PNG, JPEG, GIF or WebP)", clipboard.ErrNoImage)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "clipboard-*"+ext)
	if err != nil {
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), f.Close()
}

// clipboardDone attaches the picture read from the clipboard. Without one,
// Ctrl+V pastes the clipboard's text as the input box does; the first time
// the clipboard cannot be read at all, a line says why.
func (m *Model) clipboardDone(msg clipboardMsg) []tea.Cmd {
	switch {
	case msg.err == nil:
		m.input.InsertString(m.attachPasted(msg.path, "clipboard"+filepath.Ext(msg.path)) + " ")
		return nil
	case errors.Is(msg.err, clipboard.ErrNoImage), errors.Is(msg.err, clipboard.ErrNoTool), errors.Is(msg.err, errNoPasteStore):
		if !errors.Is(msg.err, clipboard.ErrNoImage) && msg.key != nil && !m.paste.hinted {
			m.paste.hinted = true
			m.print(m.th.dim.Render(oneLine("Images cannot be pasted from the clipboard here: "+clean(msg.err.Error()), m.width)))
		}
		if msg.key == nil {
			return nil
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(*msg.key)
		return []tea.Cmd{cmd}
	}
	m.print(m.th.warn.Render(oneLine("The clipboard's image was not pasted: "+clean(msg.err.Error()), m.width)))
	return nil
}

// pastedIn returns the files and placeholders of the pasted images whose
// placeholders text holds, in the order they appear.
func (m *Model) pastedIn(text string) (paths, labels []string) {
	type at struct {
		i int
		p pastedImage
	}
	var found []at
	for _, p := range m.paste.images {
		if i := strings.Index(text, p.label); i >= 0 {
			found = append(found, at{i, p})
		}
	}
	sort.Slice(found, func(a, b int) bool { return found[a].i < found[b].i })
	for _, f := range found {
		paths = append(paths, f.p.path)
		labels = append(labels, f.p.label)
	}
	return paths, labels
}

// deletePlaceholder deletes the whole placeholder of a pasted image that
// ends at the cursor, as Backspace there would one character of it; false
// if none ends there.
func (m *Model) deletePlaceholder() bool {
	if len(m.paste.images) == 0 {
		return false
	}
	lines := strings.Split(m.input.Value(), "\n")
	row, col := m.input.Line(), m.input.Column()
	if row >= len(lines) {
		return false
	}
	rs := []rune(lines[row])
	if col > len(rs) {
		return false
	}
	before := string(rs[:col])
	for _, p := range m.paste.images {
		if strings.HasSuffix(before, p.label) {
			for range utf8.RuneCountInString(p.label) {
				m.input, _ = m.input.Update(tea.KeyPressMsg{Code: tea.KeyBackspace})
			}
			return true
		}
	}
	return false
}
