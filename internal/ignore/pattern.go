package ignore

import "strings"

// result is what one pattern says about a path.
type result int

const (
	noMatch result = iota
	exclude        // the path is ignored
	include        // a "!" pattern takes the path back
)

// pattern is one line of an ignore file, as gitignore(5) describes it.
type pattern struct {
	// domain holds the components of the directory whose ignore file the
	// pattern came from, relative to the root; it applies only beneath.
	domain []string
	// segs are the pattern's components between slashes. A "**" segment
	// stands for any number of directories.
	segs    []segment
	negate  bool // "!pattern"
	dirOnly bool // "pattern/": only directories
	// anchored patterns (a slash at the start or in the middle) match the
	// path from domain down; the others match its last component at any
	// depth.
	anchored bool
}

// parsePattern parses line, a line of an ignore file in the directory
// whose components are domain (kept, not copied). ok is false for lines
// that are not patterns: blank ones and comments.
func parsePattern(line string, domain []string) (p pattern, ok bool) {
	line = trimTrailingSpaces(line)
	if line == "" || line[0] == '#' {
		return pattern{}, false
	}
	if line[0] == '!' {
		p.negate = true
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		p.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if strings.HasPrefix(line, "/") {
		p.anchored = true
		line = strings.TrimLeft(line, "/")
	}
	if line == "" {
		return pattern{}, false
	}
	if strings.Contains(line, "/") {
		p.anchored = true
	}
	for s := range strings.SplitSeq(line, "/") {
		// An empty segment ("a//b") is kept: it matches no name, as in git.
		if s == "**" && len(p.segs) > 0 && p.segs[len(p.segs)-1].dirs {
			continue // "**/**" is "**"
		}
		p.segs = append(p.segs, newSegment(s))
	}
	p.domain = domain
	return p, true
}

// trimTrailingSpaces drops the spaces at the end of line that are not
// escaped with a backslash.
func trimTrailingSpaces(line string) string {
	end := len(line)
	for end > 0 && line[end-1] == ' ' {
		// An odd number of backslashes before the space escapes it.
		bs := 0
		for i := end - 2; i >= 0 && line[i] == '\\'; i-- {
			bs++
		}
		if bs%2 == 1 {
			break
		}
		end--
	}
	return line[:end]
}

// segment is one component of a pattern.
type segment struct {
	text string // as written, for tests
	dirs bool   // "**": any number of directories
	g    glob
	// spans: the glob holds a "**" that is not the whole component, which
	// matches "/" too, so the segment may match several components.
	spans bool
}

func newSegment(s string) segment {
	if s == "**" {
		return segment{text: s, dirs: true}
	}
	g := compileGlob(s)
	return segment{text: s, g: g, spans: g.crossesSlash()}
}

// match says whether the pattern excludes or includes the path whose
// components, relative to the root, are parts (isDir: it is a directory).
// Only the path itself is judged, not its parent directories.
func (p *pattern) match(parts []string, isDir bool) result {
	if len(parts) <= len(p.domain) {
		return noMatch
	}
	for i, d := range p.domain {
		if parts[i] != d {
			return noMatch
		}
	}
	if p.dirOnly && !isDir {
		return noMatch
	}
	rel := parts[len(p.domain):]
	var ok bool
	if p.anchored {
		ok = matchSegs(p.segs, rel)
	} else {
		ok = p.segs[0].dirs || p.segs[0].g.match(rel[len(rel)-1])
	}
	switch {
	case !ok:
		return noMatch
	case p.negate:
		return include
	}
	return exclude
}

// matchSegs matches pattern segments against path components, a "**"
// segment taking any number of components (at least one when it ends the
// pattern: "dir/**" is what is inside dir). It works through the segments
// one by one, keeping the set of path prefixes matched so far, so a
// pattern with many "**" costs segments × components, never more: the
// patterns come from the repository, which may be hostile.
func matchSegs(segs []segment, parts []string) bool {
	// reach[j]: the segments so far match parts[:j].
	var buf [2][32]bool // most paths are not deeper: no allocation
	reach, next := buf[0][:], buf[1][:]
	if len(parts)+1 <= len(buf[0]) {
		reach, next = reach[:len(parts)+1], next[:len(parts)+1]
	} else {
		reach, next = make([]bool, len(parts)+1), make([]bool, len(parts)+1)
	}
	reach[0] = true
	for i, s := range segs {
		clear(next)
		some := false
		switch {
		case s.dirs && i == len(segs)-1:
			for j := range reach {
				next[j] = some // at least one component
				some = some || reach[j]
			}
		case s.dirs:
			for j := range reach {
				some = some || reach[j]
				next[j] = some
			}
		case s.spans:
			for j := range parts {
				if !reach[j] {
					continue
				}
				for k := j + 1; k <= len(parts); k++ {
					if s.g.match(strings.Join(parts[j:k], "/")) {
						next[k] = true
						some = true
					}
				}
			}
		default:
			for j := range parts {
				if reach[j] && s.g.match(parts[j]) {
					next[j+1] = true
					some = true
				}
			}
		}
		if !some {
			return false
		}
		reach, next = next, reach
	}
	return reach[len(parts)]
}
