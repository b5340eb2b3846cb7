package ignore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/mx-claw/mx-claw/internal/safefile"
)

// Names of the files and directories git gives a meaning to.
const (
	gitDir        = ".git"
	gitignoreFile = ".gitignore"
	infoExclude   = ".git/info/exclude"
)

// Matcher answers whether paths of one tree are ignored. It reads each
// .gitignore file the first time a path beneath it is asked about (or
// walked), and keeps what it read, so it describes the tree as it was then.
//
// A Matcher is safe for concurrent use.
type Matcher struct {
	fsys fs.FS

	mu sync.Mutex
	// rules maps a directory (slash-separated, "." for the root) that is
	// not ignored to the patterns that apply to its entries, lowest
	// priority first: .git/info/exclude, then the .gitignore files from
	// the root down to the directory itself.
	rules map[string][]pattern
}

// New returns a Matcher for the tree rooted at the directory root.
// Symlinks inside the tree are followed when .gitignore files are read
// (see [NewFS] for a confined file system).
func New(root string) *Matcher { return NewFS(os.DirFS(root)) }

// NewFS returns a Matcher for the tree fsys, for example an [os.Root]'s
// FS, which keeps every read inside the root.
func NewFS(fsys fs.FS) *Matcher {
	return &Matcher{fsys: fsys, rules: make(map[string][]pattern)}
}

// WalkFunc is called by [Matcher.Walk] for each entry that is not ignored.
// rel is the entry's slash-separated path relative to the tree's root. It
// may return [fs.SkipDir] (for a directory: do not descend into it; for a
// file: skip the rest of its directory) or [fs.SkipAll] (stop the walk,
// which then returns nil); any other error stops the walk and is returned.
type WalkFunc func(rel string, d fs.DirEntry) error

// Walk calls fn for every entry of the tree at root that git would not
// ignore, in lexical order, depth first; see [Matcher.Walk].
func Walk(root string, fn WalkFunc) error { return New(root).Walk(".", fn) }

// Match reports whether git ignores rel, a slash-separated path relative
// to the root (isDir says whether it is a directory): whether a pattern
// excludes it or one of its parent directories, or it is or is inside a
// .git directory. The root itself ("." or "") is never ignored.
func (m *Matcher) Match(rel string, isDir bool) bool {
	rel = path.Clean(strings.TrimPrefix(rel, "/"))
	if rel == "." {
		return false
	}
	parts := strings.Split(rel, "/")
	for i := range parts {
		if parts[i] == gitDir {
			return true
		}
		dir := "."
		if i > 0 {
			dir = strings.Join(parts[:i], "/")
		}
		rules := m.rulesFor(dir)
		if excluded(rules, parts[:i+1], isDir || i < len(parts)-1) {
			return true
		}
	}
	return false
}

// Walk calls fn for every entry beneath dir (slash-separated, relative to
// the root; "." for the root) that git would not ignore, depth first, in
// lexical order within each directory, a directory before its contents.
// It is not called for dir itself. Ignored directories are pruned without
// being read, and so are .git directories (and .git files, which point to
// a submodule's repository). Symlinks are reported as they are, not
// followed. .gitignore files are read as the walk reaches them.
//
// If dir is itself ignored (or inside an ignored directory), the caller
// asked for it by name, so no patterns apply: everything beneath it is
// reported except .git. A walk of .git or of a directory inside it reports
// nothing.
//
// Walk returns an error if dir cannot be read; subdirectories that cannot
// be read are skipped.
func (m *Matcher) Walk(dir string, fn WalkFunc) error {
	dir = path.Clean(strings.TrimPrefix(dir, "/"))
	if dir == "" {
		dir = "."
	}
	entries, err := fs.ReadDir(m.fsys, dir)
	if err != nil {
		return fmt.Errorf("walk %s: %w", dir, err)
	}
	var parts []string
	if dir != "." {
		parts = strings.Split(dir, "/")
	}
	if slices.Contains(parts, gitDir) {
		return nil
	}
	w := walker{m: m, fn: fn, apply: !m.Match(dir, true)}
	var rules []pattern
	if w.apply {
		rules = m.rulesFor(dir)
	}
	err = w.walk(dir, parts, rules, entries)
	if errors.Is(err, fs.SkipAll) || errors.Is(err, fs.SkipDir) {
		return nil
	}
	return err
}

// walker is one walk of a tree.
type walker struct {
	m     *Matcher
	fn    WalkFunc
	apply bool // whether ignore patterns apply
}

// walk visits entries, the contents of dir, whose path components are
// parts and whose entries rules (dir's .gitignore included) apply to.
func (w *walker) walk(dir string, parts []string, rules []pattern, entries []fs.DirEntry) error {
	child := make([]string, len(parts)+1)
	copy(child, parts)
	for _, e := range entries {
		name := e.Name()
		if name == gitDir {
			continue
		}
		isDir := e.IsDir()
		child[len(parts)] = name
		if excluded(rules, child, isDir) {
			continue
		}
		rel := name
		if dir != "." {
			rel = dir + "/" + name
		}
		err := w.fn(rel, e)
		if errors.Is(err, fs.SkipDir) {
			if isDir {
				continue
			}
			return nil
		}
		if err != nil {
			return err
		}
		if !isDir {
			continue
		}
		sub, err := fs.ReadDir(w.m.fsys, rel)
		if err != nil {
			continue
		}
		subRules := rules
		if w.apply && hasGitignore(sub) {
			subRules = w.m.extend(rel, child, rules)
		}
		if err := w.walk(rel, child, subRules, sub); err != nil {
			return err
		}
	}
	return nil
}

// hasGitignore reports whether entries hold a .gitignore file.
func hasGitignore(entries []fs.DirEntry) bool {
	for _, e := range entries {
		if e.Name() == gitignoreFile && !e.IsDir() {
			return true
		}
	}
	return false
}

// excluded reports whether the highest-priority pattern of rules that
// matches parts excludes it.
func excluded(rules []pattern, parts []string, isDir bool) bool {
	for i := len(rules) - 1; i >= 0; i-- {
		switch rules[i].match(parts, isDir) {
		case exclude:
			return true
		case include:
			return false
		}
	}
	return false
}

// rulesFor returns the patterns that apply to the entries of dir, a clean
// slash-separated directory ("." for the root), reading the .gitignore
// files from the root down as needed.
func (m *Matcher) rulesFor(dir string) []pattern {
	m.mu.Lock()
	rules, ok := m.rules[dir]
	m.mu.Unlock()
	if ok {
		return rules
	}
	if dir == "." {
		return m.extend(dir, nil, m.readPatterns(infoExclude, nil))
	}
	return m.extend(dir, strings.Split(dir, "/"), m.rulesFor(path.Dir(dir)))
}

// extend returns parent, the rules of dir's parent, followed by the
// patterns of dir's .gitignore scoped to dir (whose components are parts),
// and remembers them for dir.
func (m *Matcher) extend(dir string, parts []string, parent []pattern) []pattern {
	m.mu.Lock()
	rules, ok := m.rules[dir]
	m.mu.Unlock()
	if ok {
		return rules
	}
	rules = parent
	if ps := m.readPatterns(path.Join(dir, gitignoreFile), parts); len(ps) > 0 {
		// A new array, so the parent's rules stay as they are.
		rules = append(parent[:len(parent):len(parent)], ps...)
	}
	m.mu.Lock()
	m.rules[dir] = rules
	m.mu.Unlock()
	return rules
}

// readPatterns parses the ignore file name (relative to the root) with its
// patterns scoped to domain. A missing or unreadable file has none.
func (m *Matcher) readPatterns(name string, domain []string) []pattern {
	data, err := safefile.ReadFS(m.fsys, name, safefile.DefaultMax)
	if err != nil {
		return nil
	}
	return parse(data, domain)
}

// parse parses the text of a .gitignore file whose directory, relative to
// the root, has the components domain (nil for the root). Blank lines and
// comments are dropped; CRLF line ends are accepted.
func parse(data []byte, domain []string) []pattern {
	// The patterns keep domain: a copy, as the caller's slice may change.
	domain = slices.Clone(domain)
	var ps []pattern
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		if p, ok := parsePattern(strings.TrimSuffix(sc.Text(), "\r"), domain); ok {
			ps = append(ps, p)
		}
	}
	return ps
}
