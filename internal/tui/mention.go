package tui

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mx-claw/mx-claw/internal/attach"
	"github.com/mx-claw/mx-claw/internal/safefile"
)

// maxMentionCandidates bounds the completions listed for one @ word.
const maxMentionCandidates = 200

// mentionCandidates returns the workspace paths that complete word (which
// starts with "@"), relative to root, each with its "@"; directories end
// with "/". Only the typed directory is listed; .git and the names the
// workspace's top-level .gitignore excludes are skipped.
func mentionCandidates(root, word string) []string {
	if !strings.HasPrefix(word, "@") {
		return nil
	}
	typed := word[1:]
	if filepath.IsAbs(typed) {
		return nil
	}
	dir, base := "", typed
	if i := strings.LastIndex(typed, "/"); i >= 0 {
		dir, base = typed[:i+1], typed[i+1:]
	}
	full := filepath.Join(root, filepath.FromSlash(dir))
	if !inside(root, full) {
		return nil
	}
	entries, err := os.ReadDir(full)
	if err != nil {
		return nil
	}
	ignored := gitignored(root)
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || name == ".git" {
			continue
		}
		if strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		if ignored(dir+name, e.IsDir()) {
			continue
		}
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			if fi, err := os.Stat(filepath.Join(full, name)); err == nil && fi.IsDir() {
				isDir = true
			}
		}
		c := "@" + dir + name
		if isDir {
			c += "/"
		}
		out = append(out, c)
		if len(out) >= maxMentionCandidates {
			break
		}
	}
	sort.Strings(out)
	return out
}

// gitignored returns a cheap matcher of the workspace's top-level
// .gitignore: simple patterns matched against the base name or the whole
// relative path; negations and "**" are not understood (such lines are
// skipped).
func gitignored(root string) func(rel string, dir bool) bool {
	data, err := safefile.ReadFile(filepath.Join(root, ".gitignore"), safefile.DefaultMax)
	if err != nil {
		return func(string, bool) bool { return false }
	}
	var pats []string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "!") || strings.Contains(l, "**") {
			continue
		}
		pats = append(pats, l)
	}
	return func(rel string, dir bool) bool {
		base := rel[strings.LastIndex(rel, "/")+1:]
		for _, p := range pats {
			onlyDir := strings.HasSuffix(p, "/")
			p = strings.TrimSuffix(p, "/")
			if onlyDir && !dir {
				continue
			}
			if strings.Contains(p, "/") {
				if ok, _ := filepath.Match(strings.TrimPrefix(p, "/"), rel); ok {
					return true
				}
				continue
			}
			if ok, _ := filepath.Match(p, base); ok {
				return true
			}
		}
		return false
	}
}

// inside reports whether path is root or below it, comparing whole path
// components.
func inside(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}

// errNotText and errOutside say why a mentioned file is not attached.
var (
	errNotText = errors.New("not a text file")
	errOutside = errors.New("outside the workspace")
)

// attachment is a file attached by an @path mention.
type attachment struct {
	rel   string // the path relative to the workspace, with slashes
	lines int
	block string // the <file> block sent to the model
}

// readMention resolves one mention (without its "@") and reads the file.
// It returns os.ErrNotExist (wrapped) when the path names nothing, so
// that an "@" word that is no path is left alone.
func readMention(root, typed string) (attachment, error) {
	if typed == "" {
		return attachment{}, os.ErrNotExist
	}
	if filepath.IsAbs(typed) {
		if _, err := os.Stat(typed); err != nil {
			return attachment{}, err
		}
		return attachment{}, errOutside
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return attachment{}, err
	}
	path := filepath.Join(root, filepath.FromSlash(typed))
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return attachment{}, err
	}
	if !inside(realRoot, real) || !inside(root, path) {
		return attachment{}, errOutside
	}
	fi, err := os.Stat(real)
	if err != nil {
		return attachment{}, err
	}
	if !fi.Mode().IsRegular() {
		return attachment{}, errNotText
	}
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return attachment{}, err
	}
	f, err := attach.Read(real, filepath.ToSlash(rel))
	if errors.Is(err, attach.ErrNotText) {
		return attachment{}, errNotText
	}
	if err != nil {
		return attachment{}, err
	}
	return attachment{rel: f.Rel, lines: f.Lines, block: f.Block}, nil
}

// attachMentions finds the @path words of text that name text files of
// the workspace and returns text followed by a <file> block for each, the
// attachments, and a note for each mention refused.
func attachMentions(root, text string) (string, []attachment, []string) {
	var atts []attachment
	var refused []string
	seen := map[string]bool{}
	var sb strings.Builder
	sb.WriteString(text)
	for _, w := range strings.Fields(text) {
		if !strings.HasPrefix(w, "@") || len(w) < 2 {
			continue
		}
		typed := w[1:]
		if isImagePath(typed) {
			continue // sent as an image (images.go)
		}
		a, err := readMention(root, typed)
		if errors.Is(err, os.ErrNotExist) {
			// "see @main.go," — try without trailing punctuation.
			if t := strings.TrimRight(typed, ",.;:!?)]}'\""); t != typed {
				typed = t
				a, err = readMention(root, typed)
			}
		}
		switch {
		case err == nil:
			if seen[a.rel] {
				continue
			}
			seen[a.rel] = true
			atts = append(atts, a)
			sb.WriteString(a.block)
		case errors.Is(err, errOutside):
			refused = append(refused, fmt.Sprintf("not attached: %s (outside the workspace)", typed))
		case errors.Is(err, errNotText):
			refused = append(refused, fmt.Sprintf("not attached: %s (not a text file)", typed))
		case errors.Is(err, os.ErrNotExist):
			// Not a path: an ordinary word.
		default:
			refused = append(refused, fmt.Sprintf("not attached: %s (%v)", typed, err))
		}
	}
	return sb.String(), atts, refused
}

// lastWord returns the start of the last whitespace-separated word of v.
func lastWord(v string) int {
	return strings.LastIndexAny(v, " \t\n") + 1
}

// commonPrefix returns the longest common prefix of ss (not empty).
func commonPrefix(ss []string) string {
	prefix := ss[0]
	for _, s := range ss[1:] {
		for !strings.HasPrefix(s, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	for !utf8.ValidString(prefix) {
		prefix = prefix[:len(prefix)-1]
	}
	return prefix
}
