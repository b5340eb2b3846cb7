package builtin

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mx-claw/mx-claw/internal/tools"
)

// BenchmarkGrep compares bare rg (run with the arguments the tool gives
// it, output discarded), the tool on rg and the tool on its Go engine, on
// the Go distribution's source tree (used read-only as the workspace) and
// on a generated tree of five 20 MB files, for a literal and a regexp.
//
//	go test ./internal/tools/builtin -run '^$' -bench Grep -benchtime 10x
func BenchmarkGrep(b *testing.B) {
	rg, _ := exec.LookPath("rg")
	big := b.TempDir()
	writeBigTree(b, big, 5, 20<<20)
	trees := []struct{ name, root string }{
		{"goroot", filepath.Join(goroot(), "src")},
		{"big", big},
	}
	patterns := []struct{ name, pattern string }{
		{"literal", "TODO"},
		{"regexp", `func \w+Error\(`},
	}
	for _, tree := range trees {
		ws, err := tools.NewWorkspace(tree.root)
		if err != nil {
			b.Fatal(err)
		}
		env := &tools.Env{Workspace: ws}
		for _, p := range patterns {
			args, _ := json.Marshal(map[string]string{"pattern": p.pattern})
			b.Run(tree.name+"/"+p.name+"/bare-rg", func(b *testing.B) {
				if rg == "" {
					b.Skip("ripgrep (rg) not on PATH")
				}
				q, err := newGrepQuery(grepArgs{Pattern: p.pattern})
				if err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					cmd := exec.Command(rg, rgArgs(q, ".")...)
					cmd.Dir = ws.Root()
					cmd.Stdout = io.Discard
					if err := cmd.Run(); err != nil {
						b.Fatal(err)
					}
				}
			})
			for _, engine := range []string{"rg", "go"} {
				b.Run(tree.name+"/"+p.name+"/tool-"+engine, func(b *testing.B) {
					tool := newGrep()
					tool.rg = ""
					if engine == "rg" {
						rg, err := exec.LookPath("rg")
						if err != nil {
							b.Skip("ripgrep (rg) not on PATH")
						}
						tool.rg = rg
					}
					tool.goFallback = false
					for b.Loop() {
						if _, err := tool.Run(context.Background(), env, args); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// writeBigTree writes n files of about size bytes each: text lines with a
// TODO every 1000 lines and a "func …Error(" every 1500.
func writeBigTree(b *testing.B, dir string, n, size int) {
	b.Helper()
	for i := range n {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("big%d.txt", i)))
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriter(f)
		for line, written := 0, 0; written < size; line++ {
			var k int
			switch {
			case line%1000 == 999:
				k, _ = fmt.Fprintf(w, "\t// TODO: item %d needs a closer look\n", line)
			case line%1500 == 1499:
				k, _ = fmt.Fprintf(w, "func parse%dError(x int) error {\n", line)
			default:
				k, _ = fmt.Fprintf(w, "the quick brown fox %d jumps over the lazy dog, again and again\n", line)
			}
			written += k
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
