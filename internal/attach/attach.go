package attach

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/mx-claw/mx-claw/internal/safefile"
)

// MaxBytes caps the content of one attached file.
const MaxBytes = 64 << 10

// ErrNotText is matched by the error for a file that is not text (not
// regular, NUL bytes, not UTF-8).
var ErrNotText = errors.New("not a text file")

// File is an attached file.
type File struct {
	// Rel is the path the block names, with slashes.
	Rel string
	// Lines counts the attached lines.
	Lines int
	// Block is the text appended to the message: two newlines, then the
	// <file> element.
	Block string
}

// Read reads the regular file at abs through safefile (no FIFO or
// device, at most MaxBytes of it) and returns it as an attachment named
// rel.
func Read(abs, rel string) (File, error) {
	f, fi, err := safefile.Open(abs)
	if err != nil {
		return File{}, err
	}
	defer f.Close()
	if !fi.Mode().IsRegular() {
		return File{}, ErrNotText
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return File{}, err
	}
	truncated := len(data) > MaxBytes
	if truncated {
		data = data[:MaxBytes]
		// Do not cut a character in two.
		for i := 0; i < utf8.UTFMax && len(data) > 0 && !utf8.Valid(data); i++ {
			data = data[:len(data)-1]
		}
	}
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return File{}, ErrNotText
	}
	content := string(data)
	lines := strings.Count(content, "\n")
	if content != "" && !strings.HasSuffix(content, "\n") {
		lines++
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n\n<file path=%q>\n", rel)
	sb.WriteString(content)
	if !strings.HasSuffix(content, "\n") && content != "" {
		sb.WriteString("\n")
	}
	if truncated {
		fmt.Fprintf(&sb, "[truncated: only the first %d KiB of %d bytes are attached]\n", MaxBytes>>10, fi.Size())
	}
	sb.WriteString("</file>")
	return File{Rel: rel, Lines: lines, Block: sb.String()}, nil
}
