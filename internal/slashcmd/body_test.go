package slashcmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// kinds renders parts as "T:text", "S:command", "F:path" for comparison.
func kinds(parts []Part) []string {
	var out []string
	for _, p := range parts {
		out = append(out, [...]string{"T", "S", "F"}[p.Kind]+":"+p.Text)
	}
	return out
}

func TestParseBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		want       []string
	}{
		{"plain", "hello", []string{"T:hello"}},
		{"marker", "Status: !`git status`\n", []string{"T:Status: ", "S:git status", "T:\n"}},
		{"marker at start", "!`date`", []string{"S:date"}},
		{"marker trimmed", "!`  ls -a  `", []string{"S:ls -a"}},
		{"marker after paren", "(!`pwd`)", []string{"T:(", "S:pwd", "T:)"}},
		{"two markers", "!`a` and !`b`", []string{"S:a", "T: and ", "S:b"}},
		{"compound", "!`git add . && git commit -m x`", []string{"S:git add . && git commit -m x"}},
		{"bang after word", "Hi!`x`", []string{"T:Hi!`x`"}},
		{"double bang", "!!`x`", []string{"T:!!`x`"}},
		{"empty marker", "!`` x", []string{"T:!`` x"}},
		{"blank marker", "!` ` x", []string{"T:!` ` x"}},
		{"unclosed marker", "!`ls\nmore`", []string{"T:!`ls\nmore`"}},
		{"double-backtick marker", "!``ls``", []string{"T:!``ls``"}},
		{"backticks inside", "!`a``b`", []string{"T:!`a``b`"}},
		{"marker in code span", "``!`ls` `` done", []string{"T:``!`ls` `` done"}},
		{"code span then marker", "`x` !`y`", []string{"T:`x` ", "S:y"}},
		{"fence", "```sh\n!`rm -rf /`\n@a.go\n```\n!`ok`", []string{"T:```sh\n!`rm -rf /`\n@a.go\n```\n", "S:ok"}},
		{"tilde fence", "~~~\n!`x`\n~~~~\n!`y`", []string{"T:~~~\n!`x`\n~~~~\n", "S:y"}},
		{"unclosed fence", "```\n!`x`\n", []string{"T:```\n!`x`\n"}},
		{"shorter closer stays open", "````\n```\n!`x`\n", []string{"T:````\n```\n!`x`\n"}},
		{"inline triple is no fence", "```a``` !`x`", []string{"T:```a``` ", "S:x"}},
		{"ref", "Review @src/utils/helpers.js", []string{"T:Review ", "F:src/utils/helpers.js"}},
		{"ref punctuation", "See @main.go, then @b.go.", []string{"T:See ", "F:main.go", "T:, then ", "F:b.go", "T:."}},
		{"ref in parens", "(@a/b.md)", []string{"T:(", "F:a/b.md", "T:)"}},
		{"ref quoted", `"@x.txt"`, []string{`T:"`, "F:x.txt", `T:"`}},
		{"email", "mail ops@example.com", []string{"T:mail ops@example.com"}},
		{"bare at", "a @ b @", []string{"T:a @ b @"}},
		{"ref in code span", "`@types/node` and `x @y.go`", []string{"T:`@types/node` and `x @y.go`"}},
		{"bare word ref", "@claude hi", []string{"F:claude", "T: hi"}},
		{"ref then marker", "@a.go !`ls`", []string{"F:a.go", "T: ", "S:ls"}},
		{"unclosed span", "`oops !`ls`", []string{"T:`oops !`ls`"}},
		{"crlf", "!`ls`\r\n@a.go\r\n", []string{"S:ls", "T:\r\n", "F:a.go", "T:\r\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := kinds(ParseBody(tt.body)); !slices.Equal(got, tt.want) {
				t.Errorf("ParseBody(%q)\n got %q\nwant %q", tt.body, got, tt.want)
			}
		})
	}
}

// The fixtures are shaped like public command files: a commit command
// with four !`git …` lines and Bash allowed-tools, a review of
// configuration files by @path, and a command that shows the syntax in a
// fence and in code spans.
func TestParseFixtures(t *testing.T) {
	t.Parallel()
	cmds, warnings := Discover([]Root{{Dir: abs(t, "dynamic"), Source: "user"}})
	if len(warnings) > 0 || len(cmds) != 3 {
		t.Fatalf("commands %v, warnings %q", cmds, warnings)
	}
	tests := []struct {
		name, args  string
		shell, refs []string
	}{
		{"commit", "", []string{"git status", "git diff HEAD", "git branch --show-current", "git log --oneline -5"}, nil},
		{"review-config", "docs/build.md", nil, []string{"go.mod", "Makefile", "docs/build.md", "claude"}},
		{"howto", "", []string{"git branch --show-current"}, nil},
	}
	for _, tt := range tests {
		c, err := Find(cmds, tt.name)
		if err != nil {
			t.Fatal(err)
		}
		body, err := c.Expand(tt.args)
		if err != nil {
			t.Fatal(err)
		}
		var shell, refs []string
		for _, p := range ParseBody(body) {
			switch p.Kind {
			case Shell:
				shell = append(shell, p.Text)
			case FileRef:
				refs = append(refs, p.Text)
			}
		}
		if !slices.Equal(shell, tt.shell) || !slices.Equal(refs, tt.refs) {
			t.Errorf("/%s: commands %q, references %q; want %q, %q", tt.name, shell, refs, tt.shell, tt.refs)
		}
	}
	commit, _ := Find(cmds, "commit")
	if want := []string{"Bash(git add:*)", "Bash(git status:*)", "Bash(git commit:*)"}; !slices.Equal(commit.AllowedTools, want) {
		t.Errorf("allowed tools %q", commit.AllowedTools)
	}
}

func TestExpander(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var ran []string
	x := Expander{
		Check: func(_ context.Context, line string) error {
			if strings.HasPrefix(line, "rm") {
				return fmt.Errorf("%s is denied", line)
			}
			return nil
		},
		Run: func(_ context.Context, line string) (string, error) {
			ran = append(ran, line)
			return "<" + line + " output with @b.go and !`x`>", nil
		},
		Attach: func(_ context.Context, path string) (string, string, error) {
			switch path {
			case "a.go", "./a.go":
				return "\n\n<file path=\"a.go\">\nA\n</file>", "a.go", nil
			case "secret.txt":
				return "", "", errors.New("a read deny rule covers it")
			}
			return "", "", fmt.Errorf("open %s: %w", path, fs.ErrNotExist)
		},
	}
	got, err := x.Expand(ctx, "S: !`git status` see @a.go and @./a.go; ask @claude")
	want := "S: <git status output with @b.go and !`x`> see @a.go and @./a.go; ask @claude\n\n<file path=\"a.go\">\nA\n</file>"
	if err != nil || got != want {
		t.Fatalf("Expand = %q, %v\nwant %q", got, err, want)
	}
	if !slices.Equal(ran, []string{"git status"}) {
		t.Errorf("ran %q", ran)
	}

	// A refused command refuses the whole body before anything runs.
	ran = nil
	_, err = x.Expand(ctx, "!`echo first` then !`rm -rf build`")
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "rm -rf build is denied") || len(ran) > 0 {
		t.Errorf("refused command: %v, ran %q", err, ran)
	}
	// So does a missing path or a denied file.
	for body, msg := range map[string]string{"!`ls` @missing/x.go": "@missing/x.go: open missing/x.go", "!`ls` @secret.txt": "deny rule"} {
		_, err = x.Expand(ctx, body)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), msg) || len(ran) > 0 {
			t.Errorf("%q: %v, ran %q", body, err, ran)
		}
	}
	// With no way to run commands, a marker is refused, not sent as text.
	if _, err := (Expander{}).Expand(ctx, "!`ls`"); !errors.Is(err, ErrRefused) {
		t.Errorf("no runner: %v", err)
	}
	if got, err := (Expander{}).Expand(ctx, "plain ops@example.com"); err != nil || got != "plain ops@example.com" {
		t.Errorf("plain body: %q, %v", got, err)
	}
}

// FuzzParseBody checks, on any body (a command file is untrusted input),
// that parsing never panics, that the parts put back together are the
// body, and that each part is what its kind says.
func FuzzParseBody(f *testing.F) {
	for _, s := range []string{"", "!`git status`", "@a.go", "```\n!`x`\n```", "``!`x` ``", "a!`b`@c", "!`", "@", "~~~\n", "é@ü!`ö`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var b strings.Builder
		for _, p := range ParseBody(body) {
			b.WriteString(p.Raw)
			switch p.Kind {
			case Shell:
				if p.Text == "" || strings.ContainsAny(p.Text, "`\n") || p.Raw != "!`"+p.Raw[2:len(p.Raw)-1]+"`" {
					t.Fatalf("bad shell part %+v", p)
				}
			case FileRef:
				if p.Text == "" || strings.ContainsAny(p.Text, " \t\n\r") || p.Raw != "@"+p.Text {
					t.Fatalf("bad file part %+v", p)
				}
			case Text:
				if p.Raw != p.Text || p.Text == "" {
					t.Fatalf("bad text part %+v", p)
				}
			}
		}
		if b.String() != body {
			t.Fatalf("parts give %q, body %q", b.String(), body)
		}
		if utf8.ValidString(body) {
			for _, p := range ParseBody(body) {
				if !utf8.ValidString(p.Text) {
					t.Fatalf("part %+v of a valid body is not UTF-8", p)
				}
			}
		}
	})
}
