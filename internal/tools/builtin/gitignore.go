package builtin

import (
	"path"
	"strings"
)

// gitignore is a subset of .gitignore matching, enough to keep build output
// and dependencies out of list_dir. It reads one file (the workspace
// root's) and supports:
//
//   - blank lines and "#" comments; "\#" and "\!" for a literal first
//     character;
//   - "!" to re-include what an earlier pattern excluded (the last match
//     wins, as in git);
//   - a trailing "/" to match directories only;
//   - a leading or inner "/" to anchor the pattern at the root; otherwise
//     the pattern matches a name at any depth;
//   - "*", "?" and "[…]" within a name (path.Match), and "**" as a whole
//     component ("**/x", "x/**", "a/**/b").
//
// Not supported: nested .gitignore files, .git/info/exclude, the global
// excludes file, backslash escapes other than the two above, and trailing
// spaces kept by "\ ". A full implementation is a later task.
type gitignore struct {
	rules []ignoreRule
}

// ignoreRule is one pattern line.
type ignoreRule struct {
	segs     []string // the pattern split at "/"
	anchored bool     // matched against the whole path, not just the name
	dirOnly  bool
	negate   bool
}

// parseGitignore parses the text of a .gitignore file.
func parseGitignore(text string) *gitignore {
	g := &gitignore{}
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimRight(line, "\r")
		line = strings.TrimRight(line, " \t")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var r ignoreRule
		if strings.HasPrefix(line, "!") {
			r.negate = true
			line = line[1:]
		} else if strings.HasPrefix(line, `\#`) || strings.HasPrefix(line, `\!`) {
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly = true
			line = strings.TrimRight(line, "/")
		}
		if strings.HasPrefix(line, "/") {
			r.anchored = true
			line = strings.TrimLeft(line, "/")
		}
		if strings.Contains(line, "/") {
			r.anchored = true
		}
		if line == "" {
			continue
		}
		r.segs = strings.Split(line, "/")
		g.rules = append(g.rules, r)
	}
	return g
}

// ignored reports whether rel (slash-separated, relative to the root) is
// ignored. isDir says whether it is a directory. A nil gitignore ignores
// nothing.
func (g *gitignore) ignored(rel string, isDir bool) bool {
	if g == nil {
		return false
	}
	segs := strings.Split(rel, "/")
	ignored := false
	for _, r := range g.rules {
		if r.dirOnly && !isDir {
			continue
		}
		var ok bool
		if r.anchored {
			ok = matchSegments(r.segs, segs)
		} else {
			ok = matchSegments(r.segs, segs[len(segs)-1:])
		}
		if ok {
			ignored = !r.negate
		}
	}
	return ignored
}

// matchSegments matches path components against pattern components, where
// a "**" component matches any number of path components (and a trailing
// "**" at least one, so "x/**" matches what is inside x, not x).
func matchSegments(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			if len(rest) == 0 {
				return len(segs) > 0
			}
			for i := 0; i <= len(segs); i++ {
				if matchSegments(rest, segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], segs[0]); err != nil || !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}
