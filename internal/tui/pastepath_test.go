package tui

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// pngBytes is a minimal file that sniffs as PNG.
var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00")

func TestPastedFiles(t *testing.T) {
	t.Parallel()
	root, home, other := t.TempDir(), t.TempDir(), t.TempDir()
	write := func(dir, name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	shot := write(other, "my shot.png", pngBytes)
	plain := write(other, "plain.png", pngBytes)
	write(root, "docs/diagram.png", pngBytes)
	write(home, "Desktop/Screen Shot.png", pngBytes)
	notes := write(other, "notes.txt", []byte("text\n"))
	fake := write(other, "fake.png", []byte("not a picture"))
	noExt := write(other, "screenshot", pngBytes)
	os.Mkdir(filepath.Join(other, "dir.png"), 0o755)

	cases := []struct {
		name, paste string
		want        []string // the absolute paths of the images, or nil when the paste stays text
		words       []string // the words kept for the files that are not images
	}{
		{name: "plain absolute", paste: plain, want: []string{plain}},
		{name: "unescaped spaces", paste: shot, want: []string{shot}},
		{name: "single quotes", paste: "'" + shot + "'", want: []string{shot}},
		{name: "double quotes", paste: `"` + shot + `"`, want: []string{shot}},
		{name: "backslash-escaped space", paste: strings.ReplaceAll(shot, " ", `\ `), want: []string{shot}},
		{name: "file URI", paste: "file://" + strings.ReplaceAll(shot, " ", "%20"), want: []string{shot}},
		{name: "file URI on localhost", paste: "file://localhost" + plain, want: []string{plain}},
		{name: "file URI of another host", paste: "file://server" + plain},
		{name: "home", paste: `~/Desktop/Screen\ Shot.png`, want: []string{filepath.Join(home, "Desktop/Screen Shot.png")}},
		{name: "relative to the workspace", paste: "docs/diagram.png", want: []string{filepath.Join(root, "docs/diagram.png")}},
		{name: "trailing space and newline", paste: plain + " \n", want: []string{plain}},
		{name: "image by content, no extension", paste: noExt, want: []string{noExt}},
		{name: "missing", paste: filepath.Join(other, "missing.png")},
		{name: "not an image", paste: notes},
		{name: "image name, other content", paste: fake},
		{name: "a directory", paste: filepath.Join(other, "dir.png")},
		{name: "several on a line", paste: "'" + shot + "' " + plain, want: []string{shot, plain}},
		{name: "several on lines", paste: plain + "\n" + shot + "\n", want: []string{shot, plain}},
		{name: "an image and another file", paste: plain + " " + notes, want: []string{plain}, words: []string{notes}},
		{name: "an image in prose", paste: "look at " + plain},
		{name: "unterminated quote", paste: "'" + plain},
		{name: "empty", paste: "  "},
		{name: "too long", paste: plain + strings.Repeat(" ", maxPathPaste) + plain},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files, ok := pastedFiles(root, home, c.paste)
			if c.want == nil {
				if ok {
					t.Fatalf("pastedFiles(%q) = %+v, want text", c.paste, files)
				}
				return
			}
			if !ok {
				t.Fatalf("pastedFiles(%q) is text, want %v", c.paste, c.want)
			}
			var imgs, words []string
			for _, f := range files {
				if f.image {
					imgs = append(imgs, f.path)
				} else {
					words = append(words, f.word)
				}
			}
			// Lines keep their order; compare as sets.
			if strings.Join(sorted(imgs), "|") != strings.Join(sorted(c.want), "|") || strings.Join(words, "|") != strings.Join(c.words, "|") {
				t.Fatalf("pastedFiles(%q): images %q, other words %q; want %q, %q", c.paste, imgs, words, c.want, c.words)
			}
		})
	}
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

func TestShellWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want []string
		ok   bool
	}{
		{`a b`, []string{"a", "b"}, true},
		{`'a b' "c d" e\ f`, []string{"a b", "c d", "e f"}, true},
		{`"say \"hi\"" 'it''s'`, []string{`say "hi"`, "its"}, true},
		{`x'y z'w`, []string{"xy zw"}, true},
		{`'open`, nil, false},
		{`"open`, nil, false},
		{`end\`, nil, false},
	} {
		words, ok := shellWords(c.in)
		var got []string
		for _, w := range words {
			got = append(got, w.text)
		}
		if ok != c.ok || strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("shellWords(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
