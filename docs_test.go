package mxclaw_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsCoverTheCode keeps the contributor docs true: every local link of
// README.md and docs/ leads to a file of the repository (no design notes a
// clone does not have), and the package map names every package.
func TestDocsCoverTheCode(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)#]+)(#[^)]*)?\)`)
	files, _ := filepath.Glob("docs/*.md")
	files = append(files, "README.md")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), target)); err != nil {
				t.Errorf("%s links to %s, which the repository does not have", f, target)
			}
		}
		if strings.Contains(string(data), "shared/DESIGN.md") {
			t.Errorf("%s points to design notes outside the repository", f)
		}
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not on PATH")
	}
	out, err := exec.Command("go", "list", "./internal/...", "./cmd/...").Output()
	if err != nil {
		t.Fatal(err)
	}
	pkgMap, err := os.ReadFile("docs/packages.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(pkg, "github.com/mx-claw/mx-claw/")
		if rel == "internal/testutil" || strings.Count(rel, "/") > 2 {
			continue
		}
		if !strings.Contains(string(pkgMap), "`"+rel+"`") {
			t.Errorf("docs/packages.md does not describe %s", rel)
		}
	}
}
