package web_test

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/server/web"
)

// TestCSP checks the policy the panel is served with: nothing inline,
// nothing from elsewhere, no framing, Trusted Types required.
func TestCSP(t *testing.T) {
	t.Parallel()
	directives := map[string]string{}
	for _, d := range strings.Split(web.CSP, ";") {
		f := strings.Fields(d)
		if len(f) > 0 {
			directives[f[0]] = strings.Join(f[1:], " ")
		}
	}
	for name, want := range map[string]string{
		"default-src":               "'none'",
		"script-src":                "'self'",
		"style-src":                 "'self'",
		"connect-src":               "'self'",
		"object-src":                "'none'",
		"frame-ancestors":           "'none'",
		"base-uri":                  "'none'",
		"require-trusted-types-for": "'script'",
	} {
		if directives[name] != want {
			t.Errorf("CSP %s = %q, want %q", name, directives[name], want)
		}
	}
	if strings.Contains(web.CSP, "unsafe-") || strings.Contains(web.CSP, "*") {
		t.Errorf("CSP allows unsafe or any sources: %s", web.CSP)
	}
}

// TestNoInlineScriptOrStyle reads every HTML file of the panel: scripts
// come only from files of the panel (type module with a src and no body),
// and there is no inline event handler, style attribute, <style> element
// or javascript: URL; the CSP would block them anyway, so any would be a
// part of the page that silently does not work.
func TestNoInlineScriptOrStyle(t *testing.T) {
	t.Parallel()
	script := regexp.MustCompile(`(?is)<script\b([^>]*)>(.*?)</script>`)
	handler := regexp.MustCompile(`(?i)\son[a-z]+\s*=`)
	styleAttr := regexp.MustCompile(`(?i)\sstyle\s*=`)
	src := regexp.MustCompile(`\ssrc="(/[a-z0-9_-]+\.js)"`)
	files := 0
	err := fs.WalkDir(web.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(p, ".html") {
			return err
		}
		files++
		data, err := fs.ReadFile(web.FS(), p)
		if err != nil {
			return err
		}
		html := string(data)
		scripts := script.FindAllStringSubmatch(html, -1)
		if len(scripts) == 0 {
			t.Errorf("%s: no script at all", p)
		}
		for _, m := range scripts {
			if strings.TrimSpace(m[2]) != "" {
				t.Errorf("%s: inline script %q", p, m[0])
			}
			s := src.FindStringSubmatch(m[1])
			if s == nil {
				t.Errorf("%s: script without a local src: %q", p, m[0])
				continue
			}
			if _, err := fs.Stat(web.FS(), strings.TrimPrefix(s[1], "/")); err != nil {
				t.Errorf("%s: script %s is not a file of the panel", p, s[1])
			}
		}
		for _, re := range []*regexp.Regexp{handler, styleAttr, regexp.MustCompile(`(?i)<style\b`), regexp.MustCompile(`(?i)javascript:`)} {
			if loc := re.FindStringIndex(html); loc != nil {
				t.Errorf("%s: %q is not allowed", p, html[loc[0]:min(loc[1]+20, len(html))])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatal("no HTML file in the panel")
	}
}

// TestScriptsUseNoHTMLSinks is a static guard to go with the Trusted Types
// policy: no script of the panel turns a string into markup or code.
func TestScriptsUseNoHTMLSinks(t *testing.T) {
	t.Parallel()
	sinks := regexp.MustCompile(`\.(innerHTML|outerHTML)\s*=|insertAdjacentHTML|document\.write|\beval\(|new Function\(|setTimeout\(\s*['"]|\.setAttribute\(\s*['"](style|on[a-z]+)['"]|createContextualFragment|DOMParser`)
	err := fs.WalkDir(web.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(p, ".js") {
			return err
		}
		data, err := fs.ReadFile(web.FS(), p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			if m := sinks.FindString(line); m != "" {
				t.Errorf("%s:%d uses %q", p, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestModuleImportsResolve checks that every relative import of every
// module names a file of the panel: a typo would break the page only in
// a browser.
func TestModuleImportsResolve(t *testing.T) {
	t.Parallel()
	imp := regexp.MustCompile(`(?m)^\s*import\s[^'"]*['"]\./([^'"]+)['"]`)
	err := fs.WalkDir(web.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(p, ".js") {
			return err
		}
		data, _ := fs.ReadFile(web.FS(), p)
		for _, m := range imp.FindAllStringSubmatch(string(data), -1) {
			if _, err := fs.Stat(web.FS(), m[1]); err != nil {
				t.Errorf("%s imports ./%s, which is not a file of the panel", p, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
