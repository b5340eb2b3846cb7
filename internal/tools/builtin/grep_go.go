package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp/syntax"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/mx-claw/mx-claw/internal/ignore"
)

// Sizes of the Go engine's reads.
const (
	// grepChunk is how much is read at a time (ripgrep reads as much).
	grepChunk = 64 << 10
	// grepMaxScanLine is how much of one line is matched; the rest of a
	// longer line is skipped.
	grepMaxScanLine = 8 << 20
)

// searchGo is grep's Go engine: it walks the tree with .gitignore rules
// (pruning ignored directories, skipping hidden entries and symlinks like
// ripgrep does) and searches the files on runtime.GOMAXPROCS workers,
// each streaming its file in chunks, skipping files that hold a NUL byte
// and jumping from one occurrence of the pattern's required literal to the
// next rather than matching every line.
//
// Files are opened through an os.Root per directory, opened as the walk
// enters it, so opening a file costs one lookup rather than one per
// component of its path, and nothing can lead outside.
func (t *grep) searchGo(ctx context.Context, q *grepQuery, d *searchDir, c *collector) error {
	if !d.isDir {
		s := newLineSearcher(q)
		return s.searchFile(ctx, d.sub, c, func() (*os.File, error) { return openNonblock(d.root, d.sub) })
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	jobs := make(chan grepJob, 64)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			s := newLineSearcher(q)
			for j := range jobs {
				for _, rel := range j.rels {
					if ctx.Err() != nil {
						break
					}
					open := func() (*os.File, error) { return openNonblock(j.dir.root, path.Base(rel)) }
					if s.searchFile(ctx, rel, c, open) != nil || c.isStopped() {
						cancel()
					}
				}
				j.dir.release()
			}
		})
	}

	top, err := d.root.OpenRoot(d.sub)
	if err != nil {
		close(jobs)
		wg.Wait()
		return pathError(d.rel, err)
	}
	// The files of a directory are handed to the workers in batches, as
	// one send per file costs more than searching a small file.
	var batch grepJob
	send := func() bool {
		if batch.dir == nil {
			return true
		}
		select {
		case jobs <- batch:
			batch = grepJob{}
			return true
		case <-ctx.Done():
			batch.dir.release()
			return false
		}
	}
	stack := []openDir{{rel: d.sub, h: newDirHandle(top)}}
	err = ignore.NewFS(d.walkFS()).Walk(d.sub, func(rel string, e fs.DirEntry) error {
		if ctx.Err() != nil {
			return fs.SkipAll
		}
		// Leave the directories the walk is done with.
		for parent := path.Dir(rel); stack[len(stack)-1].rel != parent && len(stack) > 1; {
			stack[len(stack)-1].h.release()
			stack = stack[:len(stack)-1]
		}
		dir := stack[len(stack)-1].h
		if batch.dir != dir || len(batch.rels) == grepBatch {
			if !send() {
				return fs.SkipAll
			}
		}
		if q.hide != nil && q.hide(rel) {
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasPrefix(e.Name(), "."):
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		case e.IsDir():
			if q.include.skipDir(rel) {
				return fs.SkipDir
			}
			sub, err := dir.root.OpenRoot(e.Name())
			if err != nil {
				return fs.SkipDir
			}
			stack = append(stack, openDir{rel: rel, h: newDirHandle(sub)})
			return nil
		case !e.Type().IsRegular() || !q.include.wantFile(rel):
			return nil
		}
		if batch.dir == nil {
			// The batch keeps the directory open until it is searched.
			batch.dir = dir
			dir.refs.Add(1)
		}
		batch.rels = append(batch.rels, rel)
		return nil
	})
	send()
	for _, o := range stack {
		o.h.release()
	}
	close(jobs)
	wg.Wait()
	if err != nil {
		return pathError(d.rel, err)
	}
	return nil
}

// openNonblock opens name in r for reading with O_NONBLOCK, which spares
// the two fcntl calls per file that the os package otherwise makes on
// Unix, and keeps a FIFO swapped in for a file from blocking the search.
// Reads of regular files are unaffected.
func openNonblock(r *os.Root, name string) (*os.File, error) {
	return r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// grepBatch is the most files handed to a worker at once.
const grepBatch = 32

// grepJob is files of one directory for a worker to search.
type grepJob struct {
	dir  *dirHandle // the directory holding them
	rels []string   // their paths relative to the base
}

// openDir is a directory the walk is in.
type openDir struct {
	rel string
	h   *dirHandle
}

// dirHandle is an os.Root on a directory, closed when the walk has left
// it and the workers are done with its files.
type dirHandle struct {
	root *os.Root
	refs atomic.Int32
}

func newDirHandle(r *os.Root) *dirHandle {
	h := &dirHandle{root: r}
	h.refs.Store(1)
	return h
}

func (h *dirHandle) release() {
	if h.refs.Add(-1) == 0 {
		_ = h.root.Close()
	}
}

// lineSearcher searches files one at a time with buffers it reuses.
type lineSearcher struct {
	q   *grepQuery
	buf []byte

	// Per file:
	hits    *fileHits
	collect bool      // whether lines are kept (or only counted)
	lineNo  int       // number of the next line
	after   int       // after-context lines still to keep
	ring    []hitLine // the lines just before the next one, for before-context
}

func newLineSearcher(q *grepQuery) *lineSearcher {
	return &lineSearcher{q: q, buf: make([]byte, grepChunk)}
}

// searchFile searches the file at rel, which open opens, and hands what
// it found to c. Files that cannot be opened are skipped, as ripgrep
// skips them.
func (s *lineSearcher) searchFile(ctx context.Context, rel string, c *collector, open func() (*os.File, error)) error {
	f, err := open()
	if err != nil {
		return nil
	}
	defer f.Close()
	s.hits = &fileHits{path: rel, max: s.q.max}
	s.collect = !c.full(rel)
	s.lineNo, s.after, s.ring = 1, 0, s.ring[:0]
	if err := s.search(ctx, f); err != nil {
		return err
	}
	c.add(s.hits)
	return nil
}

// search reads r to the end, or to its first NUL byte (a binary file,
// where the search stops as ripgrep's does), and collects the hits.
func (s *lineSearcher) search(ctx context.Context, r io.Reader) error {
	buf := s.buf
	end := 0         // buf[:end] holds data not yet searched
	discard := false // skipping the rest of a line longer than grepMaxScanLine
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if end == len(buf) {
			if len(buf) < grepMaxScanLine {
				buf = append(buf, make([]byte, len(buf))...)
				s.buf = buf
			} else {
				// A line too long to hold: search what is held of it
				// and skip the rest.
				s.block(buf[:end])
				end, discard = 0, true
			}
		}
		n, err := r.Read(buf[end:])
		chunk := buf[end : end+n]
		if bytes.IndexByte(chunk, 0) >= 0 {
			return nil
		}
		if discard {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				n = 0
			} else {
				copy(chunk, chunk[i+1:])
				n -= i + 1
				discard = false
			}
		}
		end += n
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof {
			return nil // unreadable: keep what was found, like ripgrep
		}
		// Search the complete lines (and a last line without a newline).
		done := bytes.LastIndexByte(buf[:end], '\n') + 1
		if eof {
			done = end
		}
		if done > 0 {
			s.block(buf[:done])
			end = copy(buf, buf[done:end])
		}
		if eof {
			return nil
		}
	}
}

// block searches whole lines (the last may lack its newline).
func (s *lineSearcher) block(b []byte) {
	q := s.q
	pos := 0
	for pos < len(b) {
		if s.after == 0 && q.lit != nil {
			i := bytes.Index(b[pos:], q.lit)
			if i < 0 {
				s.skip(b[pos:])
				return
			}
			start := pos + bytes.LastIndexByte(b[pos:pos+i], '\n') + 1
			s.skip(b[pos:start])
			pos = start
		}
		next := len(b)
		line := b[pos:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line, next = line[:i], pos+i+1
		}
		switch {
		case q.re.Match(line):
			if !s.collect {
				s.hits.matches++
				break
			}
			for _, l := range s.ring {
				s.hits.addContext(l.num, l.text, l.cut)
			}
			s.ring = s.ring[:0]
			at := -1
			if len(line) > grepMaxLineLen {
				at = q.re.FindIndex(line)[0]
			}
			text, cut := clipLine(line, at)
			s.hits.addMatch(s.lineNo, text, cut)
			s.after = q.context
			// Past the cap, the rest of the file is only counted.
			s.collect = !s.hits.done
		case !s.collect:
		case s.after > 0:
			text, cut := clipLine(line, -1)
			s.hits.addContext(s.lineNo, text, cut)
			s.after--
		case q.context > 0:
			s.remember(s.lineNo, line)
		}
		s.lineNo++
		pos = next
	}
}

// skip passes over lines without a match, remembering the last few for
// before-context.
func (s *lineSearcher) skip(b []byte) {
	if len(b) == 0 {
		return
	}
	n := bytes.Count(b, []byte{'\n'})
	if b[len(b)-1] != '\n' {
		n++
	}
	if s.collect && s.q.context > 0 {
		// The last lines of b, found from its end.
		var starts []int
		end := len(b)
		if b[end-1] == '\n' {
			end--
		}
		for k := 0; k < s.q.context && k < n; k++ {
			i := bytes.LastIndexByte(b[:end], '\n') + 1
			starts = append(starts, i)
			end = i - 1
		}
		for k := len(starts) - 1; k >= 0; k-- {
			line := b[starts[k]:]
			if i := bytes.IndexByte(line, '\n'); i >= 0 {
				line = line[:i]
			}
			s.remember(s.lineNo+n-1-k, line)
		}
	}
	s.lineNo += n
}

// remember keeps line number num as possible before-context.
func (s *lineSearcher) remember(num int, line []byte) {
	if len(s.ring) == s.q.context {
		copy(s.ring, s.ring[1:])
		s.ring = s.ring[:len(s.ring)-1]
	}
	text, cut := clipLine(line, -1)
	s.ring = append(s.ring, hitLine{num: num, text: text, cut: cut})
}

// requiredLiteral returns the longest string that every match of re
// contains (as far as a simple look at the syntax tree can tell), or "".
// Case-folded literals do not count.
func requiredLiteral(re *syntax.Regexp) string {
	exact := func(r *syntax.Regexp) bool {
		return r.Op == syntax.OpLiteral && r.Flags&syntax.FoldCase == 0
	}
	switch re.Op {
	case syntax.OpLiteral:
		if exact(re) {
			return string(re.Rune)
		}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		var best string
		var run strings.Builder
		flush := func() {
			if run.Len() > len(best) {
				best = run.String()
			}
			run.Reset()
		}
		for _, sub := range re.Sub {
			if exact(sub) {
				run.WriteString(string(sub.Rune))
				continue
			}
			flush()
			if l := requiredLiteral(sub); len(l) > len(best) {
				best = l
			}
		}
		flush()
		return best
	}
	return ""
}

// includeGlob is grep's include filter. It follows ripgrep's --glob,
// which has .gitignore's rules: a glob without "/" matches a name at any
// depth, one with "/" the whole path from the workspace root (or the
// allowed directory searched); a leading "!" excludes what matches.
type includeGlob struct {
	glob   string // as given
	pat    string
	negate bool
	byName bool
}

func parseInclude(s string) (*includeGlob, error) {
	g := &includeGlob{glob: s, pat: s}
	if rest, ok := strings.CutPrefix(g.pat, "!"); ok {
		g.negate, g.pat = true, rest
	}
	if rest, ok := strings.CutPrefix(g.pat, "/"); ok {
		g.pat = rest
	} else if !strings.Contains(g.pat, "/") {
		g.byName = true
	}
	if g.pat == "" || !doublestar.ValidatePattern(g.pat) {
		return nil, fmt.Errorf("invalid include glob %q (check for an unclosed [ or {)", s)
	}
	return g, nil
}

func (g *includeGlob) match(rel string) bool {
	if g.byName {
		rel = path.Base(rel)
	}
	return doublestar.MatchUnvalidated(g.pat, rel)
}

// wantFile reports whether the file at rel is to be searched.
func (g *includeGlob) wantFile(rel string) bool { return g == nil || g.match(rel) != g.negate }

// skipDir reports whether the directory at rel is excluded.
func (g *includeGlob) skipDir(rel string) bool { return g != nil && g.negate && g.match(rel) }
