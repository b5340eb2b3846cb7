package tui

import (
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/mx-claw/mx-claw/internal/images"
)

// A paste is looked at as file paths only when it is short: prose and
// code pasted in bulk stay text without a look at the disk.
const (
	maxPathPaste = 8 << 10
	maxPathWords = 32
)

// pastedFile is one path of a paste that names an existing file.
type pastedFile struct {
	word  string // as pasted (quoted, escaped, a file:// URI…)
	path  string // absolute
	image bool   // a PNG, JPEG, GIF or WebP by its content
}

// pastedFiles reads a paste as the paths of files, as terminals deliver a
// file dropped on them or a path copied from a file manager: one path or
// several, separated by spaces or lines, each plain, quoted ('…' or
// "…"), with backslash-escaped spaces, or a file:// URI; absolute, ~/… or
// relative to root. It returns the files, and ok when every word of the
// paste is an existing file and at least one is an image; otherwise the
// paste is text.
func pastedFiles(root, home, text string) (files []pastedFile, ok bool) {
	text = strings.TrimSpace(text)
	if text == "" || len(text) > maxPathPaste {
		return nil, false
	}
	anyImage := false
	add := func(f pastedFile) bool {
		files = append(files, f)
		anyImage = anyImage || f.image
		return len(files) <= maxPathWords
	}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		// A path with unescaped spaces, as some file managers copy it.
		if f, ok := pastedFileAt(root, home, line); ok {
			if !add(f) {
				return nil, false
			}
			continue
		}
		words, ok := shellWords(line)
		if !ok {
			return nil, false
		}
		for _, w := range words {
			f, ok := pastedFileAt(root, home, w.text)
			if !ok {
				return nil, false
			}
			f.word = w.raw
			if !add(f) {
				return nil, false
			}
		}
	}
	return files, anyImage
}

// pastedFileAt resolves one pasted path (already unquoted) to the regular
// file it names, if there is one.
func pastedFileAt(root, home, word string) (pastedFile, bool) {
	p := word
	if strings.HasPrefix(strings.ToLower(p), "file:") {
		u, err := url.Parse(p)
		if err != nil || !strings.EqualFold(u.Scheme, "file") || u.Host != "" && u.Host != "localhost" || u.Path == "" {
			return pastedFile{}, false
		}
		p = u.Path
	}
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" {
			return pastedFile{}, false
		}
		p = filepath.Join(home, p[1:])
	case !filepath.IsAbs(p):
		p = filepath.Join(root, p)
	}
	p = filepath.Clean(p)
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return pastedFile{}, false
	}
	return pastedFile{word: word, path: p, image: isImageFile(p)}, true
}

// isImageFile reports whether a file holds a PNG, JPEG, GIF or WebP, by
// its first bytes.
func isImageFile(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	return images.Sniff(head[:n]) != ""
}

// shellWord is a word of a line split as a POSIX shell would: its text
// and the raw characters it was written with.
type shellWord struct{ text, raw string }

// shellWords splits a line into words at unquoted blanks, removing quotes
// and backslash escapes as sh does; ok is false for an unterminated quote
// or a trailing backslash.
func shellWords(line string) (words []shellWord, ok bool) {
	var cur, raw strings.Builder
	inWord := false
	end := func() {
		if inWord {
			words = append(words, shellWord{cur.String(), raw.String()})
		}
		cur.Reset()
		raw.Reset()
		inWord = false
	}
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == ' ' || c == '\t':
			end()
			continue
		case c == '\\':
			if i+1 == len(rs) {
				return nil, false
			}
			raw.WriteRune(c)
			i++
			cur.WriteRune(rs[i])
			raw.WriteRune(rs[i])
		case c == '\'':
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			if j == len(rs) {
				return nil, false
			}
			cur.WriteString(string(rs[i+1 : j]))
			raw.WriteString(string(rs[i : j+1]))
			i = j
		case c == '"':
			raw.WriteRune(c)
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune("\\\"$`", rs[j+1]) {
					raw.WriteRune(rs[j])
					j++
				}
				cur.WriteRune(rs[j])
				raw.WriteRune(rs[j])
			}
			if j == len(rs) {
				return nil, false
			}
			raw.WriteRune('"')
			i = j
		default:
			cur.WriteRune(c)
			raw.WriteRune(c)
		}
		inWord = true
	}
	end()
	return words, true
}
