package memory

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// FileName is the name of the instruction files Load looks for.
const FileName = "AGENTS.md"

// DefaultMaxBytes is the default cap on the merged text: 32 KiB, about
// 8,000 tokens, a few percent of a current model's window.
const DefaultMaxBytes = 32 << 10

// Options tune Load. The zero value is valid.
type Options struct {
	// MaxBytes caps the length of Context.Text, headers included; zero or
	// less means DefaultMaxBytes.
	MaxBytes int
	// Cache, if set, is consulted and filled; nil reads every file.
	Cache *Cache
	// FS is the file system to read; nil means OSFS.
	FS FS
}

// Context is the merged AGENTS.md text for a workspace.
type Context struct {
	// Text is the files' contents, outermost first, each under a line
	// "# AGENTS.md from <where>", where <where> is the file's path relative
	// to the workspace (slash-separated) or, for the home file, its path
	// with the user's home directory written as "~". It is empty when no
	// file has content.
	Text string
	// Files are the canonical paths of the files in Text, in its order,
	// including any that were truncated.
	Files []string
	// Warnings say, in plain words, what was left out or cut and why.
	Warnings []string
}

// candidate is a place an AGENTS.md may be.
type candidate struct {
	path  string // where to look, in the canonical tree
	label string // how the header names it
}

// part is one file to merge.
type part struct {
	label, path, body string
	size              int64 // the file's size on disk
	// partial says body is only the beginning of the file: the file is
	// larger than the cap.
	partial bool
}

// Load discovers and merges the AGENTS.md files that apply to workspace: the
// one in home (the mx-claw home directory; "" for none), then one in each
// directory from the repository root down to the workspace. The repository
// root is the nearest ancestor of the workspace, or the workspace itself,
// that holds an entry named .git (a directory, or a file as in worktrees);
// outside a repository only the workspace directory is searched.
//
// The workspace is resolved to its canonical path first, so a symbolic link
// to a directory inside a repository finds that repository. A file reached
// by two paths is merged once, at the innermost.
//
// Files that cannot be read, directories named AGENTS.md and broken links
// are skipped with a warning. When the merged text would exceed the cap
// (Options.MaxBytes), the files nearest the workspace are kept whole, the
// next one is cut and those further out are dropped, each with a warning.
// Load returns an error only if the workspace is not an existing directory.
func Load(workspace, home string, opts Options) (Context, error) {
	fsys := opts.FS
	if fsys == nil {
		fsys = OSFS{}
	}
	maxBytes := opts.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	ws, err := canonicalDir(fsys, workspace)
	if err != nil {
		return Context{}, err
	}

	var cands []candidate
	if home != "" {
		if abs, err := filepath.Abs(filepath.Join(home, FileName)); err == nil {
			cands = append(cands, candidate{path: abs, label: homeLabel(abs)})
		}
	}
	for _, dir := range searchDirs(fsys, ws) {
		p := filepath.Join(dir, FileName)
		label := FileName
		if rel, err := filepath.Rel(ws, p); err == nil {
			label = filepath.ToSlash(rel)
		}
		cands = append(cands, candidate{path: p, label: label})
	}

	// Read innermost first, so a file reached twice counts where it matters
	// most; report problems outermost first, in the order of the text.
	var out Context
	var parts []part
	warnings := make([]string, len(cands))
	seen := make(map[string]bool)
	for i := len(cands) - 1; i >= 0; i-- {
		var p part
		p, warnings[i] = readCandidate(fsys, opts.Cache, cands[i], int64(maxBytes), seen)
		if p.body != "" {
			parts = append(parts, p)
		}
	}
	for _, w := range warnings {
		if w != "" {
			out.Warnings = append(out.Warnings, w)
		}
	}
	kept, capWarnings := capParts(parts, maxBytes)
	out.Warnings = append(out.Warnings, capWarnings...)

	var b strings.Builder
	for i := len(kept) - 1; i >= 0; i-- {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(render(kept[i].label, kept[i].body))
		out.Files = append(out.Files, kept[i].path)
	}
	out.Text = b.String()
	return out, nil
}

// canonicalDir returns the absolute, symlink-free path of the directory
// workspace.
func canonicalDir(fsys FS, workspace string) (string, error) {
	if workspace == "" {
		return "", errors.New("load AGENTS.md: no workspace directory given")
	}
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return "", fmt.Errorf("load AGENTS.md: workspace %s: %w", workspace, err)
	}
	ws, err := fsys.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("load AGENTS.md: workspace %s: %w", workspace, err)
	}
	fi, err := fsys.Stat(ws)
	if err != nil {
		return "", fmt.Errorf("load AGENTS.md: workspace %s: %w", workspace, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("load AGENTS.md: workspace %s is not a directory", workspace)
	}
	return ws, nil
}

// searchDirs returns the directories to search, from the repository root
// down to ws, or just ws outside a repository.
func searchDirs(fsys FS, ws string) []string {
	dirs := []string{ws}
	for dir := ws; ; {
		if _, err := fsys.Lstat(filepath.Join(dir, ".git")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return []string{ws} // no repository: the workspace alone
		}
		dir = parent
		dirs = append(dirs, dir)
	}
	for i, j := 0, len(dirs)-1; i < j; i, j = i+1, j-1 {
		dirs[i], dirs[j] = dirs[j], dirs[i]
	}
	return dirs
}

// homeLabel names the home file for its header: under the user's home
// directory as "~/…", elsewhere by its absolute path.
func homeLabel(path string) string {
	if u, err := os.UserHomeDir(); err == nil && u != "" && u != "/" {
		if rel, err := filepath.Rel(u, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(path)
}

// readCandidate reads the file c names, if there is one, and returns it as
// a part (empty if there is nothing to merge) and a warning if something is
// wrong with it. seen holds the canonical paths already taken.
func readCandidate(fsys FS, cache *Cache, c candidate, limit int64, seen map[string]bool) (part, string) {
	fi, err := fsys.Stat(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		if _, lerr := fsys.Lstat(c.path); lerr == nil {
			return part{}, fmt.Sprintf("%s is a broken symbolic link; ignored", c.label)
		}
		return part{}, ""
	}
	if err != nil {
		return part{}, fmt.Sprintf("cannot read %s: %v; ignored", c.label, reason(err))
	}
	if fi.IsDir() {
		return part{}, fmt.Sprintf("%s is a directory, not a file; ignored", c.label)
	}
	if !fi.Mode().IsRegular() {
		return part{}, fmt.Sprintf("%s is not a regular file; ignored", c.label)
	}
	canon, err := fsys.EvalSymlinks(c.path)
	if err != nil {
		return part{}, fmt.Sprintf("cannot read %s: %v; ignored", c.label, reason(err))
	}
	if seen[canon] {
		return part{}, ""
	}
	seen[canon] = true
	data, err := cache.read(fsys, canon, fi, limit)
	if err != nil {
		return part{}, fmt.Sprintf("cannot read %s: %v; ignored", c.label, reason(err))
	}
	body := strings.TrimSpace(strings.ToValidUTF8(string(data), "\uFFFD"))
	partial := int64(len(data)) >= limit && fi.Size() > limit
	return part{label: c.label, path: canon, body: body, size: fi.Size(), partial: partial}, ""
}

// reason returns err without the path a *fs.PathError repeats: warnings
// name the file by its label.
func reason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// header is the line above each file's text.
func header(label string) string { return "# AGENTS.md from " + label + "\n\n" }

// render returns one file's section of the merged text.
func render(label, body string) string { return header(label) + body + "\n" }

// minKept is the least of a file's text worth keeping when cutting it.
const minKept = 200

// capParts fits parts, innermost first, into maxBytes of merged text. It
// keeps files whole while they fit, cuts the first that does not (if enough
// of it fits to be worth it) and drops the rest, with a warning for each.
func capParts(parts []part, maxBytes int) ([]part, []string) {
	remaining := maxBytes
	for i, p := range parts {
		sep := 0
		if i > 0 {
			sep = 1 // the blank line between sections
		}
		need := sep + len(render(p.label, p.body))
		if !p.partial && need <= remaining {
			remaining -= need
			continue
		}
		var warnings []string
		kept := i
		room := remaining - sep - len(render(p.label, "")) - len(cutMarker(remaining, p.size))
		if room >= minKept {
			body := cut(p.body, room)
			parts[i].body = body + cutMarker(len(body), p.size)
			kept = i + 1
			warnings = append(warnings, fmt.Sprintf(
				"AGENTS.md text is over its %d-byte cap: %s was cut to its first %d of %d bytes",
				maxBytes, p.label, len(body), p.size))
		}
		for _, d := range parts[kept:] {
			warnings = append(warnings, fmt.Sprintf(
				"AGENTS.md text is over its %d-byte cap: %s (%d bytes) was left out",
				maxBytes, d.label, d.size))
		}
		return parts[:kept], warnings
	}
	return parts, nil
}

// cut returns a prefix of s of at most n bytes: up to its last line break
// if that is in the second half, else up to a character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	if i := strings.LastIndexByte(s, '\n'); i >= n/2 {
		return strings.TrimRight(s[:i], " \t\r\n")
	}
	for len(s) > 0 {
		if r, size := utf8.DecodeLastRuneInString(s); r != utf8.RuneError || size > 1 {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}

// cutMarker ends the text of a file that was cut.
func cutMarker(kept int, size int64) string {
	return fmt.Sprintf("\n\n[mx-claw: the rest of this file was cut; %d of %d bytes kept]", kept, size)
}
