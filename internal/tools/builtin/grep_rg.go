package builtin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// errRGUnusable is returned by searchRG when ripgrep could not run the
// search at all; the Go engine takes over.
var errRGUnusable = errors.New("ripgrep could not run the search")

// rgMaxMessage is the longest JSON message read from rg in full; the
// lines of a longer one are counted but not shown.
const rgMaxMessage = 16 << 20

// searchRG is grep's ripgrep engine. rg runs in the searched tree's base
// directory with the path relative to it and every argument in its own
// argv element ("--regexp=…" and "--" keep a pattern or path that starts
// with "-" from being read as a flag), without a config file, with a
// minimal environment, and with the flags that make it search what the Go
// engine searches: no global or .ignore/.rgignore files, no UTF-16
// transcoding (such files hold NULs, so they are binary). Its JSON output
// is read as it streams, and rg is killed when the count limit is reached.
func (t *grep) searchRG(ctx context.Context, q *grepQuery, d *searchDir, c *collector) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.rg, rgArgs(q, d.sub)...)
	cmd.Dir = d.base
	cmd.Env = t.rgEnv
	cmd.WaitDelay = time.Second
	var stderr limitedBuffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("%w: %v", errRGUnusable, err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%w: %v", errRGUnusable, err)
	}

	p := rgParser{q: q, c: c}
	stopped, readErr := p.read(stdout)
	if stopped {
		cancel()
	}
	waitErr := cmd.Wait()
	switch {
	case ctx.Err() != nil && !stopped:
		return ctx.Err()
	case stopped:
		return nil
	case readErr != nil:
		return fmt.Errorf("read ripgrep's output: %w", readErr)
	}
	var exit *exec.ExitError
	if errors.As(waitErr, &exit) && exit.ExitCode() == 1 {
		return nil // no match
	}
	if waitErr != nil && p.files == 0 {
		return fmt.Errorf("%w: %v: %s", errRGUnusable, waitErr, strings.TrimSpace(stderr.String()))
	}
	// Exit status 2 after some results means some files could not be
	// read; what was found stands, as it does for the Go engine.
	return nil
}

// rgArgs are rg's arguments for a search of sub.
func rgArgs(q *grepQuery, sub string) []string {
	args := []string{
		"--json", "--no-config", "--no-ignore-global", "--no-ignore-dot", "--encoding=none",
		"--regexp=" + q.pattern,
	}
	if q.fold {
		args = append(args, "--ignore-case")
	}
	if q.context > 0 {
		args = append(args, "--context="+strconv.Itoa(q.context))
	}
	if q.include != nil {
		args = append(args, "--glob="+q.include.glob)
	}
	if q.noIgnore {
		args = append(args, "--no-ignore")
	}
	return append(args, "--", sub)
}

// rgParser turns rg's JSON messages into fileHits.
type rgParser struct {
	q     *grepQuery
	c     *collector
	cur   *fileHits // the file between its begin and end messages
	skip  bool      // cur's lines are only counted
	files int       // files begun
}

// rgMessage is one line of rg --json output (begin, match, context, end;
// the summary is not read).
type rgMessage struct {
	Type string `json:"type"`
	Data struct {
		Path       rgText `json:"path"`
		Lines      rgText `json:"lines"`
		LineNumber int    `json:"line_number"`
		Submatches []struct {
			Start int `json:"start"`
		} `json:"submatches"`
		Stats struct {
			MatchedLines int `json:"matched_lines"`
		} `json:"stats"`
	} `json:"data"`
}

// rgText is rg's form of text that may not be UTF-8: {"text": …} or
// {"bytes": base64}.
type rgText struct {
	Text  *string `json:"text"`
	Bytes []byte  `json:"bytes"`
}

func (t rgText) value() []byte {
	if t.Text != nil {
		return []byte(*t.Text)
	}
	return t.Bytes
}

// Prefixes of the messages that are skipped unread while a file's lines
// are only counted.
var (
	rgMatchPrefix   = []byte(`{"type":"match"`)
	rgContextPrefix = []byte(`{"type":"context"`)
)

// read parses r to its end, or until the collector says to stop.
func (p *rgParser) read(r io.Reader) (stopped bool, err error) {
	br := bufio.NewReaderSize(r, 256<<10)
	var line []byte
	for {
		var tooLong bool
		line, tooLong, err = readMessage(br, line[:0])
		if len(line) > 0 || tooLong {
			if p.handle(line, tooLong) {
				return true, nil
			}
		}
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// handle takes one message and reports whether to stop.
func (p *rgParser) handle(line []byte, tooLong bool) (stop bool) {
	if p.cur != nil && (p.skip || tooLong) &&
		(bytes.HasPrefix(line, rgMatchPrefix) || bytes.HasPrefix(line, rgContextPrefix)) {
		return false // counted from the end message
	}
	if tooLong {
		// A match or context line too long to read: the file's lines
		// are counted from here on.
		if p.cur != nil {
			p.skip = true
		}
		return false
	}
	var m rgMessage
	if json.Unmarshal(line, &m) != nil {
		return false
	}
	switch m.Type {
	case "begin":
		path := strings.TrimPrefix(string(m.Data.Path.value()), "./")
		p.cur = &fileHits{path: path, max: p.q.max}
		p.skip = p.c.full(path)
		p.files++
	case "match":
		if p.cur == nil {
			return false
		}
		at := -1
		if len(m.Data.Submatches) > 0 {
			at = m.Data.Submatches[0].Start
		}
		text, cut := clipLine(m.Data.Lines.value(), at)
		p.cur.addMatch(m.Data.LineNumber, text, cut)
		p.skip = p.cur.done
	case "context":
		if p.cur == nil {
			return false
		}
		text, cut := clipLine(m.Data.Lines.value(), -1)
		p.cur.addContext(m.Data.LineNumber, text, cut)
	case "end":
		if p.cur == nil {
			return false
		}
		p.cur.matches = max(p.cur.matches, m.Data.Stats.MatchedLines)
		f := p.cur
		p.cur, p.skip = nil, false
		return p.c.add(f)
	}
	return false
}

// readMessage reads one line from br into buf (reused). A line longer
// than rgMaxMessage is read past; its first bytes are returned and tooLong
// is set.
func readMessage(br *bufio.Reader, buf []byte) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) <= rgMaxMessage {
			buf = append(buf, chunk...)
		} else {
			tooLong = true
			if len(buf) < len(rgContextPrefix) {
				buf = append(buf, chunk[:min(len(chunk), len(rgContextPrefix))]...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return buf, tooLong, err
	}
}

// limitedBuffer keeps the first 4 KiB written to it.
type limitedBuffer struct {
	bytes.Buffer
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := 4<<10 - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
