package ignore

import (
	"os"
	"os/exec"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// gitPaths are the files of the tree TestAgainstGit asks about, with every
// directory above them.
var gitPaths = []string{
	"a.log", "keep.log", "d/keep.log", "d/a.log", "build/out.bin", "build.txt", "lib/build",
	"src/build/x.go", "root.txt", "src/root.txt", "docs/draft.md", "docs/a/b/draft.md",
	"docs/final.md", "x/cache/file", "cache", "a/x", "a/b/c", "a/q/b", "b/x.go", "q/b/y.go",
	"q/b/z/w.go", "abc.txt", "bcd.txt", "a.md", "d.md", "#hash", "!bang", "trail ", "spaced.txt",
	"x.go", "xy.go", "foo/bar", "q/foo/bar", "dir/keep", "dir/other", "sub/a.tmp",
	"sub/local.txt", "sub/deeper/local.txt", "sub/important.log", "sub/x.log", "x[",
	"m.go/f", "deep/er/est/file.txt", "]x", "1.md", "-x", "A1.go", "tab\tname",
}

// TestAgainstGit: for each set of ignore files, the matcher ignores exactly
// the paths `git check-ignore` does, files and directories alike.
func TestAgainstGit(t *testing.T) {
	t.Parallel()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed (make test-deps installs it): cannot compare with git check-ignore")
	}
	sets := []map[string]string{
		{".gitignore": "*.log\n!keep.log\n"},
		{".gitignore": "build/\n"},
		{".gitignore": "/root.txt\n"},
		{".gitignore": "docs/**/draft.md\n"},
		{".gitignore": "**/cache\n"},
		{".gitignore": "a/**\n"},
		{".gitignore": "**/b/*.go\n"},
		{".gitignore": "[!a]*.txt\n"},
		{".gitignore": "[a-c].md\n"},
		{".gitignore": "\\#hash\n\\!bang\n"},
		{".gitignore": "trail\\ \nspaced.txt   \n"},
		{".gitignore": "?.go\n"},
		{".gitignore": "foo/bar\n"},
		{".gitignore": "*\n!*/\n!*.go\n"},
		{".gitignore": "dir/\n!dir/keep\n"},
		{".gitignore": "*.log\n", "sub/.gitignore": "*.tmp\n/local.txt\n!important.log\n"},
		{".gitignore": "a/**/b\n"},
		{".gitignore": "/**/x.go\n"},
		{".gitignore": "*.go/\n"},
		{".gitignore": "# comment\n\n   \n"},
		{".gitignore": "x[\n"},
		{".gitignore": "**\n!*.go\n"},
		{".gitignore": "deep/**/file.txt\n**/est/\n"},
		{".gitignore": "/d/\n", "d/.gitignore": "!a.log\n"},
		{".gitignore": "q/**/*.go\n!q/b/z/\n"},
		{".gitignore": "*.txt\r\n"},
		{".gitignore": "a//x\n"},
		{".gitignore": "**/**/c\n"},
		{".gitignore": "src/\n", "src/.gitignore": "!build/\n"},
		{".gitignore": "x**\n**d.md\n"},
		{".gitignore": "q/b**/w.go\ndocs/*/b\n"},
		{".gitignore": "\\\n[\n*.[!g]o\n"},
		{".gitignore": "[]a]*\n[[:digit:]].md\n[a-]*\n"},
		{".gitignore": "[[:alpha:]][[:digit:]].go\n[[:bogus:]]*\n"},
		{".gitignore": "*[[:space:]]*\n[^a-c]*.md\n"},
		{".gitignore": "[\\]]x\n\\[x\n"},
	}
	var files, dirs []string
	for _, p := range gitPaths {
		files = append(files, p)
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	for _, set := range sets {
		tree := map[string]string{}
		for _, p := range gitPaths {
			tree[p] = ""
		}
		for name, text := range set {
			tree[name] = text
		}
		root := writeTree(t, tree)
		cmd := exec.Command(git, "init", "-q")
		cmd.Dir = root
		cmd.Env = gitEnv(root)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git init: %v: %s", err, out)
		}
		all := append(append([]string(nil), files...), dirs...)
		cmd = exec.Command(git, "check-ignore", "--no-index", "--stdin")
		cmd.Dir = root
		cmd.Env = gitEnv(root)
		cmd.Stdin = strings.NewReader(strings.Join(all, "\n") + "\n")
		out, err := cmd.Output()
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
			err = nil // nothing ignored
		}
		if err != nil {
			t.Fatalf("git check-ignore: %v", err)
		}
		byGit := map[string]bool{}
		for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
			byGit[unquoteGit(l)] = true
		}
		m := New(root)
		for i, p := range all {
			isDir := i >= len(files)
			if got := m.Match(p, isDir); got != byGit[p] {
				t.Errorf("ignore files %q: %q (dir %v): matcher says ignored=%v, git says %v", set, p, isDir, got, byGit[p])
			}
		}
	}
}

// gitEnv keeps the user's and the system's git configuration (and their
// global excludes file) out of the comparison.
func gitEnv(home string) []string {
	return append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null")
}

// unquoteGit undoes git's C-style quoting of unusual path names (Go's
// quoted-string syntax covers git's escapes).
func unquoteGit(s string) string {
	if u, err := strconv.Unquote(s); err == nil && strings.HasPrefix(s, `"`) {
		return u
	}
	return s
}
