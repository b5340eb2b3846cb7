package builtin

import (
	"context"
	"encoding/json"
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

// TestReadFileLong reads a file of 2500 lines past the default cap of
// 2000: the output of 2000 numbered lines is generated here, which a
// fixture would have to spell out (the other cases are fixtures, in
// testdata/fixtures/read_file).
func TestReadFileLong(t *testing.T) {
	t.Parallel()
	env, root := newEnv(t)
	var long strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	writeFiles(t, root, map[string]string{"long.txt": long.String()})
	tests := []struct {
		name string
		args string
		want string
	}{
		{
			name: "default line cap", args: `{"path":"long.txt"}`,
			want: numbered(1, 2000) +
				"[… file has 2500 lines; showing 1–2000. Call read_file with offset 2001 to continue.]\n",
		},
		{name: "continuation", args: `{"path":"long.txt","offset":2001}`, want: numbered(2001, 2500)},
		{name: "explicit limit over default", args: `{"path":"long.txt","limit":2500}`, want: numbered(1, 2500)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := run(t, newReadFile(), env, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("content:\n%s\nwant:\n%s", clip(got), clip(tt.want))
			}
		})
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
