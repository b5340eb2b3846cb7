package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/tools"
)

func numbered(from, to int) string {
	var sb strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&sb, "%6d\tline %d\n", i, i)
	}
	return sb.String()
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	env, root := newEnv(t)
	var long strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	writeFiles(t, root, map[string]string{
		"abc.txt":          "a\nb\nc\n",
		"no-newline.txt":   "a\nb",
		"long.txt":         long.String(),
		"crlf.txt":         "one\r\ntwo\r\n",
		"latin1.txt":       "caf\xe9\nok\n",
		"empty.txt":        "",
		"image.png":        "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + strings.Repeat("\x00", 2000),
		"utf16.txt":        "\xff\xfeh\x00i\x00",
		"dir/main.go":      "package main\n",
		"dir/main_test.go": "package main\n",
		"dir/Other.go":     "package main\n",
		"blank.txt":        "\n\n",
		"wide.txt":         "日本語\n",
	})
	tests := []struct {
		name    string
		args    string
		want    string // exact content, if set
		has     []string
		wantErr string
	}{
		{name: "simple", args: `{"path":"abc.txt"}`, want: "     1\ta\n     2\tb\n     3\tc\n"},
		{name: "absolute", args: fmt.Sprintf(`{"path":%q}`, root+"/abc.txt"), want: "     1\ta\n     2\tb\n     3\tc\n"},
		{name: "no final newline", args: `{"path":"no-newline.txt"}`, want: "     1\ta\n     2\tb\n"},
		{name: "blank lines", args: `{"path":"blank.txt"}`, want: "     1\t\n     2\t\n"},
		{name: "utf-8 kept", args: `{"path":"wide.txt"}`, want: "     1\t日本語\n"},
		{
			name: "offset and limit", args: `{"path":"abc.txt","offset":2,"limit":1}`,
			want: "     2\tb\n[… file has 3 lines; showing 2–2. Call read_file with offset 3 to continue.]\n",
		},
		{name: "offset to the end", args: `{"path":"abc.txt","offset":3}`, want: "     3\tc\n"},
		{name: "offset as float", args: `{"path":"abc.txt","offset":3.0}`, want: "     3\tc\n"},
		{
			name: "default line cap", args: `{"path":"long.txt"}`,
			want: numbered(1, 2000) +
				"[… file has 2500 lines; showing 1–2000. Call read_file with offset 2001 to continue.]\n",
		},
		{name: "continuation", args: `{"path":"long.txt","offset":2001}`, want: numbered(2001, 2500)},
		{name: "explicit limit over default", args: `{"path":"long.txt","limit":2500}`, want: numbered(1, 2500)},
		{
			name: "crlf", args: `{"path":"crlf.txt"}`,
			want: "     1\tone\n     2\ttwo\n[Note: the file has CRLF line endings; the CRs are not shown.]\n",
		},
		{
			name: "invalid utf-8", args: `{"path":"latin1.txt"}`,
			want: "     1\tcaf\uFFFD\n     2\tok\n[Note: the file is not valid UTF-8; invalid bytes are shown as U+FFFD.]\n",
		},
		{name: "empty", args: `{"path":"empty.txt"}`, want: "empty.txt is empty (0 bytes)."},
		{name: "binary", args: `{"path":"image.png"}`, wantErr: "image.png is a binary file (2.0 KiB, looks like PNG image); read_file only shows text"},
		{name: "utf-16", args: `{"path":"utf16.txt"}`, wantErr: "utf16.txt is UTF-16 text (6 B); read_file only shows UTF-8 text, so convert it first"},
		{name: "directory", args: `{"path":"dir"}`, wantErr: "dir is a directory, not a file; use list_dir to see what it contains"},
		{name: "offset past end", args: `{"path":"abc.txt","offset":9}`, wantErr: "offset 9 is past the end of abc.txt, which has 3 lines"},
		{name: "not found, case", args: `{"path":"dir/Main.go"}`, wantErr: "file not found: dir/Main.go (did you mean dir/main.go, dir/main_test.go?)"},
		{name: "not found, extension", args: `{"path":"dir/other.txt"}`, wantErr: "file not found: dir/other.txt (did you mean dir/Other.go?)"},
		{name: "not found, nothing similar", args: `{"path":"dir/zzz.go"}`, wantErr: "file not found: dir/zzz.go"},
		{name: "not found at root", args: `{"path":"ABC.txt"}`, wantErr: "file not found: ABC.txt (did you mean abc.txt?)"},
		{name: "not found, no dir", args: `{"path":"nodir/x.go"}`, wantErr: "file not found: nodir/x.go (directory nodir does not exist either)"},
		{name: "outside", args: `{"path":"../x"}`, wantErr: `path "../x" is outside the workspace`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := run(t, newReadFile(), env, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), root+"/") {
					t.Errorf("error %q shows an absolute path", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("content:\n%s\nwant:\n%s", clip(got), clip(tt.want))
			}
		})
	}
	if _, err := run(t, newReadFile(), env, `{"path":"../x"}`); !errors.Is(err, tools.ErrOutsideWorkspace) {
		t.Errorf("outside error %v does not match ErrOutsideWorkspace", err)
	}
}

func TestReadFileByteCap(t *testing.T) {
	t.Parallel()
	env, root := newEnv(t)
	writeFiles(t, root, map[string]string{
		"f.txt":    "0123456789\n0123456789\n0123456789\n0123456789\n",
		"huge.txt": strings.Repeat("é", 100) + "\nnext\n",
	})
	tool := &readFile{maxLines: 2000, maxBytes: 40}

	got, err := run(t, tool, env, `{"path":"f.txt"}`)
	if err != nil {
		t.Fatal(err)
	}
	want := "     1\t0123456789\n     2\t0123456789\n" +
		"[… file has 4 lines; showing 1–2 (output is capped at 40 B). Call read_file with offset 3 to continue.]\n"
	if got != want {
		t.Errorf("content:\n%q\nwant:\n%q", got, want)
	}

	got, err = run(t, tool, env, `{"path":"f.txt","offset":3}`)
	if err != nil || got != "     3\t0123456789\n     4\t0123456789\n" {
		t.Errorf("continuation = %q, %v", got, err)
	}

	got, err = run(t, tool, env, `{"path":"huge.txt"}`)
	if err != nil {
		t.Fatal(err)
	}
	// 40 bytes less the 7-byte prefix and newline leaves 32: 16 runes of é.
	want = "     1\t" + strings.Repeat("é", 16) + "\n" +
		"[… line 1 is 201 B long; only its first 32 bytes are shown.]\n" +
		"[… file has 2 lines; showing 1–1 (output is capped at 40 B). Call read_file with offset 2 to continue.]\n"
	if got != want {
		t.Errorf("content:\n%q\nwant:\n%q", got, want)
	}
}

func TestSimilarNames(t *testing.T) {
	t.Parallel()
	names := []string{"README.md", "main.go", "main_test.go", "maintainers.txt", "Makefile", "config.yaml", "x"}
	tests := []struct {
		name string
		want []string
	}{
		{"readme.md", []string{"README.md"}},
		{"config.yml", []string{"config.yaml"}},
		{"main", []string{"main.go", "main_test.go", "maintainers.txt"}},
		{"makefile", []string{"Makefile"}},
		{"zzz", nil},
		{"x", nil},
	}
	for _, tt := range tests {
		got := similarNames(tt.name, names, 3)
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("similarNames(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestGuessFileType(t *testing.T) {
	t.Parallel()
	tests := []struct{ head, name, want string }{
		{"\x7fELF\x02\x01", "prog", "ELF executable or object file"},
		{"%PDF-1.7\x00", "doc.pdf", "PDF document"},
		{"PK\x03\x04\x00", "lib.jar", "Java archive (zip)"},
		{"SQLite format 3\x00", "app.db", "SQLite database"},
		{"\x00\x00\x00\x00", "data.bin", "binary data"},
		{"\x01\x00\x02", "mystery", "unknown binary data"},
	}
	for _, tt := range tests {
		if got := guessFileType([]byte(tt.head), tt.name); got != tt.want {
			t.Errorf("guessFileType(%q, %s) = %q, want %q", tt.head, tt.name, got, tt.want)
		}
	}
}

// clip shortens long test output.
func clip(s string) string { return tools.Truncate(s, 2000) }

// TestReadFileRecordsRead checks what read_file records in the guard: whole
// and partial reads and empty files, but not failed reads.
func TestReadFileRecordsRead(t *testing.T) {
	t.Parallel()
	env, root := newGuardedEnv(t)
	var long strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	files := map[string]string{
		"whole.txt": "a\nb\n",
		"part.txt":  long.String(),
		"empty.txt": "",
		"bin.dat":   "\x00\x01",
		"short.txt": "one line\n",
	}
	writeFiles(t, root, files)
	tests := []struct {
		args, file string
		recorded   bool
	}{
		{`{"path":"whole.txt"}`, "whole.txt", true},
		{`{"path":"part.txt","offset":100,"limit":5}`, "part.txt", true},
		{`{"path":"empty.txt"}`, "empty.txt", true},
		{`{"path":"bin.dat"}`, "bin.dat", false},
		{`{"path":"short.txt","offset":5}`, "short.txt", false},
	}
	for _, tt := range tests {
		_, _ = run(t, newReadFile(), env, tt.args)
		abs := filepath.Join(root, tt.file)
		fi, err := os.Stat(abs)
		if err != nil {
			t.Fatal(err)
		}
		// A wrong hash would be caught: pretend the time changed.
		err = env.Files.Check(abs, touched{fi}, []byte(files[tt.file]))
		if (err == nil) != tt.recorded {
			t.Errorf("after read_file(%s): Check = %v, want recorded=%v", tt.args, err, tt.recorded)
		}
	}
}

// touched is file information with a later modification time.
type touched struct{ os.FileInfo }

func (f touched) ModTime() time.Time { return f.FileInfo.ModTime().Add(time.Hour) }

func TestReadFileAndGrepOn50MB(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("50 MB file: skipped with -short")
	}
	env, root := newEnv(t)
	f, err := os.Create(filepath.Join(root, "big.log"))
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("x", 99) + "\n"
	chunk := strings.Repeat(line, 10000) // 1 MB
	for i := 0; i < 50; i++ {
		if i == 37 {
			f.WriteString("the needle is here\n")
		}
		f.WriteString(chunk)
	}
	f.Close()

	res, err := newReadFile().Run(context.Background(), env, json.RawMessage(`{"path":"big.log"}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) > 300<<10 || !strings.Contains(res.Content, "Call read_file with offset") {
		t.Errorf("read of a 50 MB file: %d bytes, tail %q", len(res.Content), res.Content[max(0, len(res.Content)-200):])
	}
	res, err = newReadFile().Run(context.Background(), env, json.RawMessage(`{"path":"big.log","offset":370001,"limit":3}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Content, "370001\tthe needle is here") {
		t.Errorf("offset read deep into the file: %q", res.Content)
	}
	g := newGrep()
	g.rg = ""
	res, err = g.Run(context.Background(), env, json.RawMessage(`{"pattern":"needle"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Content, "big.log:370001:the needle is here") {
		t.Errorf("grep in a 50 MB file: %q", res.Content)
	}
}
