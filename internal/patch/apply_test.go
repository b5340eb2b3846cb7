package patch

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/apply")

// TestApplyGolden applies testdata/apply/<case>/patch.txt (one Update File
// operation) to in.txt and compares the result with out.txt, or the error
// with err.txt. Run with -update to rewrite them.
func TestApplyGolden(t *testing.T) {
	t.Parallel()
	dirs, err := filepath.Glob(filepath.Join("testdata", "apply", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			in := readFile(t, filepath.Join(dir, "in.txt"))
			text := readFile(t, filepath.Join(dir, "patch.txt"))
			got, err := applyOne(text, in)
			outPath, errPath := filepath.Join(dir, "out.txt"), filepath.Join(dir, "err.txt")
			if *update {
				_ = os.Remove(outPath)
				_ = os.Remove(errPath)
				if err != nil {
					writeFile(t, errPath, err.Error()+"\n")
				} else {
					writeFile(t, outPath, got)
				}
				return
			}
			if _, statErr := os.Stat(errPath); statErr == nil {
				want := readFile(t, errPath)
				if err == nil {
					t.Fatalf("applied, want error %q; got:\n%s", want, got)
				}
				if err.Error()+"\n" != want {
					t.Errorf("error:\n%s\nwant:\n%s", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := readFile(t, outPath); got != want {
				t.Errorf("result:\n%q\nwant:\n%q", got, want)
			}
		})
	}
}

func applyOne(text, in string) (string, error) {
	p, err := Parse(text)
	if err != nil {
		return "", err
	}
	if len(p.Ops) != 1 || p.Ops[0].Kind != Update {
		return "", errors.New("fixture must hold one Update File operation")
	}
	return ApplyToContent(in, p.Ops[0].Hunks)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// hunk builds a hunk from diff-like lines: " ctx", "-old", "+new".
func hunk(ctx []string, lines ...string) Hunk {
	h := Hunk{Context: ctx, Line: 3}
	for _, l := range lines {
		h.Lines = append(h.Lines, Line{Kind: LineKind(l[0]), Text: l[1:]})
	}
	return h
}

func TestApplyToContent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		old     string
		hunks   []Hunk
		want    string
		wantErr string
	}{
		{name: "no hunks", old: "a\n", want: "a\n"},
		{name: "replace", old: "a\nb\nc\n", hunks: []Hunk{hunk(nil, " a", "-b", "+B")}, want: "a\nB\nc\n"},
		{name: "delete all", old: "a\nb\n", hunks: []Hunk{hunk(nil, "-a", "-b")}, want: ""},
		{name: "delete all, no newline", old: "a\nb", hunks: []Hunk{hunk(nil, "-a", "-b")}, want: ""},
		{name: "append to empty", old: "", hunks: []Hunk{hunk(nil, "+x")}, want: "x\n"},
		{name: "crlf kept", old: "a\r\nb\r\n", hunks: []Hunk{hunk(nil, " a", "-b", "+B", "+C")}, want: "a\r\nB\r\nC\r\n"},
		{name: "crlf last line without newline", old: "a\r\nb", hunks: []Hunk{hunk(nil, "-b", "+B")}, want: "a\r\nB"},
		{name: "trailing empty context line", old: "a\nb\n", hunks: []Hunk{hunk(nil, " b", "+c", " ")}, want: "a\nb\nc\n"},
		{name: "only an empty context line", old: "a\nb\n", hunks: []Hunk{hunk(nil, " ", "+x")}, want: "a\nb\nx\n"},
		{name: "insert after anchor", old: "x\ny\nz\n", hunks: []Hunk{hunk([]string{"y"}, "+y2")}, want: "x\ny\ny2\nz\n"},
		{name: "repeat matched after cursor", old: "k\nk\n", hunks: []Hunk{hunk(nil, "-k", "+1"), hunk(nil, "-k", "+2")}, want: "1\n2\n"},
		{name: "eof anchors at end", old: "k\nk\nk\n", hunks: []Hunk{{Lines: []Line{{LineRemoved, "k"}, {LineAdded, "end"}}, EOF: true, Line: 3}}, want: "k\nk\nend\n"},
		{name: "long line", old: strings.Repeat("x", 1<<20) + "\nb\n", hunks: []Hunk{hunk(nil, "-b", "+c")}, want: strings.Repeat("x", 1<<20) + "\nc\n"},
		{
			name: "not found names hunk and lines", old: "a\n",
			hunks:   []Hunk{hunk(nil, " a", "-b", "+c")},
			wantErr: "hunk 1 (patch line 3): the lines to replace were not found:\n  \"a\"\n  \"b\"\nThe nearest match starts at line 1",
		},
		{
			name: "anchor not found", old: "a\n",
			hunks:   []Hunk{hunk(nil, "-a", "+A"), hunk([]string{"func z()"}, "-a", "+b")},
			wantErr: `hunk 2 (patch line 3): the @@ context line "func z()" was not found after line 1`,
		},
		{
			name: "pattern longer than file", old: "a\n",
			hunks:   []Hunk{hunk(nil, " a", " b", " c", "-d")},
			wantErr: "hunk 1 (patch line 3): the lines to replace were not found",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ApplyToContent(tt.old, tt.hunks)
			if tt.wantErr != "" {
				var ae *ApplyError
				if !errors.As(err, &ae) || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want prefix %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", clip(got), clip(tt.want))
			}
		})
	}
}

func TestSeek(t *testing.T) {
	t.Parallel()
	lines := []string{"foo   ", "  bar\t", "baz", "qu\u2014x"}
	tests := []struct {
		pat   []string
		start int
		eof   bool
		want  int
		ok    bool
	}{
		{[]string{"baz"}, 0, false, 2, true},
		{[]string{"foo", "  bar"}, 0, false, 0, true},
		{[]string{"bar", "baz"}, 0, false, 1, true},
		{[]string{"qu-x"}, 0, false, 3, true},
		{[]string{"baz"}, 3, false, 0, false},
		{[]string{"baz", "qu\u2014x"}, 0, true, 2, true},
		{nil, 2, false, 2, true},
		{[]string{"a", "b", "c", "d", "e"}, 0, false, 0, false},
	}
	for _, tt := range tests {
		got, ok := seek(lines, tt.pat, tt.start, tt.eof)
		if got != tt.want || ok != tt.ok {
			t.Errorf("seek(%q, %d, %v) = %d, %v; want %d, %v", tt.pat, tt.start, tt.eof, got, ok, tt.want, tt.ok)
		}
	}
}

// clip shortens long strings in failure messages.
func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
