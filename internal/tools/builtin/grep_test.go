package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/execx"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// grepEngine is a grep tool forced onto one engine.
type grepEngine struct {
	name string
	tool func() *grep // nil: the engine is not available
}

// grepEngines returns the Go engine and, if rg is on PATH, the rg engine
// (which does not fall back on the Go engine, so a failure of rg shows).
func grepEngines() []grepEngine {
	rg, _ := exec.LookPath("rg")
	engines := []grepEngine{{name: "go", tool: func() *grep {
		g := newGrep()
		g.rg = ""
		return g
	}}}
	e := grepEngine{name: "rg"}
	if rg != "" {
		e.tool = func() *grep {
			g := newGrep()
			g.rg = rg
			g.goFallback = false
			return g
		}
	}
	return append(engines, e)
}

// forEachEngine runs f as a parallel subtest per engine.
func forEachEngine(t *testing.T, f func(t *testing.T, newTool func() *grep)) {
	t.Helper()
	for _, e := range grepEngines() {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			if e.tool == nil {
				t.Skip("ripgrep (rg) not on PATH")
			}
			f(t, e.tool)
		})
	}
}

// grepFixture builds the workspace most grep tests search. It is a git
// repository (a .git directory is enough), as rg honours .gitignore only
// inside one.
func grepFixture(t *testing.T) (*tools.Env, string) {
	t.Helper()
	env, root := newEnv(t)
	writeFiles(t, root, map[string]string{
		".git/HEAD":           "ref: refs/heads/main\n",
		".git/config":         "needle in git\n",
		".gitignore":          "build/\n*.log\n",
		".env":                "needle=hidden file\n",
		".hidden/h.txt":       "needle in hidden dir\n",
		"$(touch pwned).txt":  "needle dollar\n",
		"-rf":                 "needle dash\n",
		"bin.dat":             "needle\x00binary\n",
		"build/out.go":        "needle in build\n",
		"crlf.txt":            "needle crlf\r\n",
		"debug.log":           "needle in log\n",
		"dir with space/x.md": "-e needle dash pattern\n",
		"long.txt":            strings.Repeat("x", 5000) + "needle" + strings.Repeat("y", 5000) + "\n",
		"main.go":             "package main\n\nfunc main() {\n\tprintln(\"needle\")\n}\n",
		"src/a.txt":           "one\ntwo\nneedle three\nfour\nfive\nsix\nseven\nneedle eight\nnine\n",
		"sub/.gitignore":      "*.tmp\n",
		"sub/a.tmp":           "needle tmp\n",
		"sub/b.md":            "needle md\n",
		"util.go":             "package main\n\n// Needle in caps\nfunc helper() {}\n",
		"util_test.go":        "package main\n\nfunc TestNeedle() { _ = \"needle\" }\n",
	})
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"secret.txt": "needle outside\n"})
	if err := os.Symlink(outside, filepath.Join(root, "outlink")); err != nil {
		t.Skipf("symlinks not available: %v", err)
	}
	if err := os.Symlink("main.go", filepath.Join(root, "inlink.go")); err != nil {
		t.Fatal(err)
	}
	return env, root
}

const longNeedle = "long.txt:1:…" + "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" +
	"needle" + "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy" +
	"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy…\n"

const cutNote = "[Lines longer than 300 bytes are cut short; … marks where.]\n"

func TestGrep(t *testing.T) {
	t.Parallel()
	env, root := grepFixture(t)
	tests := []struct {
		name    string
		args    string
		want    string
		wantErr string
	}{
		{
			name: "literal", args: `{"pattern":"needle"}`,
			want: "$(touch pwned).txt:1:needle dollar\n" +
				"-rf:1:needle dash\n" +
				"crlf.txt:1:needle crlf\n" +
				"dir with space/x.md:1:-e needle dash pattern\n" +
				longNeedle +
				"main.go:4:\tprintln(\"needle\")\n" +
				"src/a.txt:3:needle three\n" +
				"src/a.txt:8:needle eight\n" +
				"sub/b.md:1:needle md\n" +
				"util_test.go:3:func TestNeedle() { _ = \"needle\" }\n" +
				cutNote,
		},
		{
			name: "regexp", args: `{"pattern":"^needle (th|ei)\\w+$","path":"src"}`,
			want: "src/a.txt:3:needle three\nsrc/a.txt:8:needle eight\n",
		},
		{
			name: "case insensitive", args: `{"pattern":"NEEDLE","case_insensitive":true,"include":"*.go"}`,
			want: "main.go:4:\tprintln(\"needle\")\n" +
				"util.go:3:// Needle in caps\n" +
				"util_test.go:3:func TestNeedle() { _ = \"needle\" }\n",
		},
		{
			name: "case sensitive", args: `{"pattern":"Needle"}`,
			want: "util.go:3:// Needle in caps\nutil_test.go:3:func TestNeedle() { _ = \"needle\" }\n",
		},
		{
			name: "include by name", args: `{"pattern":"needle","include":"*_test.go"}`,
			want: "util_test.go:3:func TestNeedle() { _ = \"needle\" }\n",
		},
		{
			name: "include by path", args: `{"pattern":"needle","include":"src/**"}`,
			want: "src/a.txt:3:needle three\nsrc/a.txt:8:needle eight\n",
		},
		{
			name: "include alternatives", args: `{"pattern":"needle","include":"*.{md,go}"}`,
			want: "dir with space/x.md:1:-e needle dash pattern\n" +
				"main.go:4:\tprintln(\"needle\")\n" +
				"sub/b.md:1:needle md\n" +
				"util_test.go:3:func TestNeedle() { _ = \"needle\" }\n",
		},
		{
			name: "include excluding", args: `{"pattern":"needle","include":"!*.{txt,go}"}`,
			want: "-rf:1:needle dash\n" +
				"dir with space/x.md:1:-e needle dash pattern\n" +
				"sub/b.md:1:needle md\n",
		},
		{
			name: "context", args: `{"pattern":"needle","path":"src/a.txt","context":1}`,
			want: "src/a.txt-2-two\nsrc/a.txt:3:needle three\nsrc/a.txt-4-four\n--\n" +
				"src/a.txt-7-seven\nsrc/a.txt:8:needle eight\nsrc/a.txt-9-nine\n",
		},
		{
			name: "context groups that touch", args: `{"pattern":"needle","path":"src","context":2}`,
			want: "src/a.txt-1-one\nsrc/a.txt-2-two\nsrc/a.txt:3:needle three\nsrc/a.txt-4-four\nsrc/a.txt-5-five\n" +
				"src/a.txt-6-six\nsrc/a.txt-7-seven\nsrc/a.txt:8:needle eight\nsrc/a.txt-9-nine\n",
		},
		{
			name: "context across files", args: `{"pattern":"needle","include":"*.go","context":1}`,
			want: "main.go-3-func main() {\nmain.go:4:\tprintln(\"needle\")\nmain.go-5-}\n--\n" +
				"util_test.go-2-\nutil_test.go:3:func TestNeedle() { _ = \"needle\" }\n",
		},
		{
			name: "pattern starting with a dash", args: `{"pattern":"-e needle"}`,
			want: "dir with space/x.md:1:-e needle dash pattern\n",
		},
		{name: "file named like a flag", args: `{"pattern":"needle","path":"-rf"}`, want: "-rf:1:needle dash\n"},
		{
			name: "file named like a command", args: `{"pattern":"dollar","path":"$(touch pwned).txt"}`,
			want: "$(touch pwned).txt:1:needle dollar\n",
		},
		{
			name: "ignored directory named as path", args: `{"pattern":"needle","path":"build"}`,
			want: "build/out.go:1:needle in build\n",
		},
		{
			name: "hidden directory named as path", args: `{"pattern":"needle","path":".hidden"}`,
			want: ".hidden/h.txt:1:needle in hidden dir\n",
		},
		{name: "ignored file named as path", args: `{"pattern":"needle","path":"debug.log"}`, want: "debug.log:1:needle in log\n"},
		{
			name: "cap", args: `{"pattern":"needle","max_results":2}`,
			want: "$(touch pwned).txt:1:needle dollar\n-rf:1:needle dash\n" +
				"[… 8 more matches in 7 files not shown; narrow the search with a more specific pattern, path or include.]\n",
		},
		{
			name: "cap inside a file", args: `{"pattern":"needle","path":"src","max_results":1,"context":1}`,
			want: "src/a.txt-2-two\nsrc/a.txt:3:needle three\nsrc/a.txt-4-four\n" +
				"[… 1 more match in 1 file not shown; narrow the search with a more specific pattern, path or include.]\n",
		},
		{
			name: "no match", args: `{"pattern":"nothing here","include":"*.go"}`,
			want: "No matches for `nothing here` in the workspace root (files matching `*.go`). " +
				"Hidden files, binary files and files ignored by .gitignore were not searched.",
		},
		{name: "binary file named as path", args: `{"pattern":"needle","path":"bin.dat"}`, wantErr: "bin.dat is a binary file"},
		{name: "invalid pattern", args: `{"pattern":"(unclosed"}`, wantErr: `invalid regular expression "(unclosed"`},
		{name: "newline", args: `{"pattern":"a\nb"}`, wantErr: "contains a newline"},
		{name: "invalid include", args: `{"pattern":"x","include":"[a"}`, wantErr: `invalid include glob "[a"`},
		{name: "outside", args: `{"pattern":"needle","path":"../"}`, wantErr: `path "../" is outside the workspace`},
		{name: "symlink outside", args: `{"pattern":"needle","path":"outlink"}`, wantErr: `path "outlink" is outside the workspace`},
		{name: "git internals", args: `{"pattern":"needle","path":".git"}`, wantErr: ".git is inside .git; grep does not search git's internals"},
		{name: "missing", args: `{"pattern":"needle","path":"nope"}`, wantErr: "path not found: nope"},
	}
	forEachEngine(t, func(t *testing.T, newTool func() *grep) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				got, err := run(t, newTool(), env, tt.args)
				if tt.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
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
					t.Errorf("output:\n%s\nwant:\n%s", got, tt.want)
				}
			})
		}
	})
	t.Cleanup(func() {
		if _, err := os.Lstat(filepath.Join(root, "pwned")); err == nil {
			t.Error("a file name was run as a command")
		}
	})
}

// TestGrepLimits covers the output byte cap and the count limit.
func TestGrepLimits(t *testing.T) {
	t.Parallel()
	env, root := newEnv(t)
	files := map[string]string{}
	for i := range 5 {
		files[fmt.Sprintf("f%d.txt", i)] = strings.Repeat("hit\n", 10)
	}
	writeFiles(t, root, files)
	forEachEngine(t, func(t *testing.T, newTool func() *grep) {
		tool := newTool()
		tool.maxBytes = 30
		got, err := run(t, tool, env, `{"pattern":"hit"}`)
		if err != nil {
			t.Fatal(err)
		}
		want := "f0.txt:1:hit\nf0.txt:2:hit\nf0.txt:3:hit\n" +
			"[… 47 more matches in 5 files not shown (the output is capped at 30 B); " +
			"narrow the search with a more specific pattern, path or include.]\n"
		if got != want {
			t.Errorf("byte cap:\n%s\nwant:\n%s", got, want)
		}

		tool = newTool()
		tool.countLimit = 15
		got, err = run(t, tool, env, `{"pattern":"hit","max_results":2}`)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got, "[… at least ") || !strings.Contains(got, "(the search stopped after ") {
			t.Errorf("count limit: %s", got)
		}
	})
}

// TestGrepBigFiles checks lines that cross read chunks, a line longer
// than a chunk and a NUL byte far into a file.
func TestGrepBigFiles(t *testing.T) {
	t.Parallel()
	env, root := newEnv(t)
	var many strings.Builder
	var want strings.Builder
	for i := 1; i <= 30000; i++ {
		if i%7000 == 0 {
			fmt.Fprintf(&many, "needle %d\n", i)
			fmt.Fprintf(&want, "many.txt:%d:needle %d\n", i, i)
			continue
		}
		fmt.Fprintf(&many, "line %d of filler text\n", i)
	}
	huge := strings.Repeat("é", 100<<10) + "needle" + "\nnext\n"
	writeFiles(t, root, map[string]string{
		"many.txt": many.String(),
		"wide.txt": huge,
		"zero.txt": strings.Repeat("filler\n", 100<<10) + "\x00needle\n",
	})
	wantWide := "wide.txt:1:…" + strings.Repeat("é", 50) + "needle…\n"
	_ = wantWide
	forEachEngine(t, func(t *testing.T, newTool func() *grep) {
		got, err := run(t, newTool(), env, `{"pattern":"needle"}`)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(got, "\n")
		if !strings.HasPrefix(got, want.String()) {
			t.Errorf("output starts:\n%s\nwant:\n%s", clip(got), want.String())
		}
		var wide string
		for _, l := range lines {
			if strings.HasPrefix(l, "wide.txt:") {
				wide = l
			}
		}
		if !strings.HasPrefix(wide, "wide.txt:1:…é") || !strings.HasSuffix(wide, "éneedle") || len(wide) > 320 {
			t.Errorf("wide line shown as %q", clip(wide))
		}
		if strings.Contains(got, "zero.txt") {
			t.Errorf("a file with a NUL byte was searched:\n%s", clip(got))
		}
	})
}

// TestGrepEnginesAgree runs both engines on a real tree and compares.
func TestGrepEnginesAgree(t *testing.T) {
	t.Parallel()
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("ripgrep (rg) not on PATH")
	}
	src := filepath.Join(goroot(), "src", "regexp")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("no Go source tree: %v", err)
	}
	ws, err := tools.NewWorkspace(src)
	if err != nil {
		t.Fatal(err)
	}
	env := &tools.Env{Workspace: ws}
	for _, args := range []string{
		`{"pattern":"func \\w+\\(","max_results":1000}`,
		`{"pattern":"TODO|BUG","context":2}`,
		`{"pattern":"error","case_insensitive":true,"include":"*_test.go","max_results":50}`,
		`{"pattern":"^\\s*return nil$","path":"syntax","max_results":1000}`,
	} {
		t.Run(args, func(t *testing.T) {
			t.Parallel()
			goTool, rgTool := newGrep(), newGrep()
			goTool.rg, rgTool.rg = "", rg
			a, errA := goTool.Run(context.Background(), env, json.RawMessage(args))
			b, errB := rgTool.Run(context.Background(), env, json.RawMessage(args))
			if errA != nil || errB != nil {
				t.Fatalf("errors: go %v, rg %v", errA, errB)
			}
			if a.Content != b.Content {
				t.Errorf("engines differ\ngo:\n%s\nrg:\n%s", clip(a.Content), clip(b.Content))
			}
			if strings.HasPrefix(a.Content, "No matches") {
				t.Errorf("no matches: %s", a.Content)
			}
		})
	}
}

func TestGrepFallback(t *testing.T) {
	t.Parallel()
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("ripgrep (rg) not on PATH")
	}
	env, root := newEnv(t)
	writeFiles(t, root, map[string]string{"a.txt": "a.b\naxb\n"})
	const args = `{"pattern":"\\Qa.b\\E"}` // RE2 knows \Q…\E, rg does not
	tool := newGrep()
	tool.rg, tool.goFallback = rg, false
	if _, err := run(t, tool, env, args); !errors.Is(err, errRGUnusable) {
		t.Errorf("rg alone: error = %v, want errRGUnusable", err)
	}
	tool.goFallback = true
	if got, err := run(t, tool, env, args); err != nil || got != "a.txt:1:a.b\n" {
		t.Errorf("with the fallback: %q, %v", got, err)
	}
	tool.rg = filepath.Join(root, "no-such-rg")
	if got, err := run(t, tool, env, args); err != nil || got != "a.txt:1:a.b\n" {
		t.Errorf("rg missing: %q, %v", got, err)
	}
}

func TestGrepCancel(t *testing.T) {
	t.Parallel()
	env, root := newEnv(t)
	writeFiles(t, root, map[string]string{"a.txt": "needle\n"})
	forEachEngine(t, func(t *testing.T, newTool func() *grep) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := newTool().Run(ctx, env, json.RawMessage(`{"pattern":"needle"}`))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error = %v, want context.Canceled", err)
		}
	})
}

func TestGrepQuery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern string
		fold    bool
		lit     string
	}{
		{"TODO", false, "TODO"},
		{`func \w+Error\(`, false, "Error("},
		{`(foo|bar)baz`, false, "baz"},
		{`a+bcd`, false, "bcd"},
		{`(abc)+x`, false, "abc"},
		{`x*`, false, ""},
		{`TODO`, true, ""},
		{`(?i:abc)defg`, false, "defg"},
		{`[ab]`, false, ""},
	}
	for _, tt := range tests {
		q, err := newGrepQuery(grepArgs{Pattern: tt.pattern, CaseInsensitive: tt.fold})
		if err != nil {
			t.Fatalf("%s: %v", tt.pattern, err)
		}
		if string(q.lit) != tt.lit {
			t.Errorf("literal of %q (fold %v) = %q, want %q", tt.pattern, tt.fold, q.lit, tt.lit)
		}
	}
}

func TestGrepEnv(t *testing.T) {
	t.Parallel()
	fixed := map[string]bool{"PATH": true, "HOME": true, "LANG": true}
	for _, kv := range execx.Env(nil, nil) {
		name, _, _ := strings.Cut(kv, "=")
		fixed[name] = true
	}
	for _, kv := range newGrep().rgEnv {
		if name, _, _ := strings.Cut(kv, "="); !fixed[name] {
			t.Errorf("rg would inherit %s", name)
		}
	}
}

func TestGrepSummary(t *testing.T) {
	t.Parallel()
	tests := []struct{ args, want string }{
		{`{"pattern":"TODO"}`, "Grep TODO"},
		{`{"pattern":"TODO","path":"./src/"}`, "Grep TODO in src"},
		{`{"pattern":"x","path":".","include":"*.go"}`, "Grep x (*.go)"},
		{`{"pattern":"x","path":"a","include":"*.go"}`, "Grep x in a (*.go)"},
	}
	for _, tt := range tests {
		if got := newGrep().Summary(json.RawMessage(tt.args)); got != tt.want {
			t.Errorf("Summary(%s) = %q, want %q", tt.args, got, tt.want)
		}
	}
}

// goroot returns the Go installation's root as `go env GOROOT` says, or ""
// (runtime.GOROOT is deprecated: it is where the test binary was built).
func goroot() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
