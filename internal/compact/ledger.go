package compact

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// Defaults of LedgerOptions.
const (
	// DefaultLedgerTokens bounds the whole ledger.
	DefaultLedgerTokens = 4000
	// DefaultLedgerUserTokens bounds the user's messages in it.
	DefaultLedgerUserTokens = 2000
	// DefaultLedgerCommands is how many of the latest commands it lists.
	DefaultLedgerCommands = 20
	// DefaultLedgerFiles is how many files it lists.
	DefaultLedgerFiles = 60
)

// Sizes of the ledger's parts, in bytes.
const (
	// userHeaderBytes is what the heading and fences of one user message
	// add, about.
	userHeaderBytes = 48
	// excerptBytes is how much of an older user message is shown once the
	// budget for whole ones is spent.
	excerptBytes = 320
	// minExcerptBytes is the least of a message worth showing.
	minExcerptBytes = 80
	// hashChars is how many hex digits of a file's SHA-256 are shown.
	hashChars = 16
)

// LedgerOptions bound and feed the ledger.
type LedgerOptions struct {
	// MaxTokens bounds the whole ledger; 0 means DefaultLedgerTokens. The
	// bound is measured as three bytes per token, which over-counts for
	// most text.
	MaxTokens int
	// UserTokens bounds the user's messages within it; 0 means
	// DefaultLedgerUserTokens, or half of MaxTokens if that is less.
	UserTokens int
	// MaxCommands is how many of the latest commands are listed; 0 means
	// DefaultLedgerCommands.
	MaxCommands int
	// MaxFiles is how many files are listed; 0 means DefaultLedgerFiles.
	MaxFiles int
	// Root is the canonical workspace root. Paths in tool calls are
	// resolved against it to find their versions in Files and shown
	// relative to it.
	Root string
	// Files are the versions of files the session read or wrote (the
	// store's file versions); a later entry for a path wins. They give the
	// hashes of the files the tool calls name.
	Files []protocol.FileVersion
}

func (o LedgerOptions) withDefaults() LedgerOptions {
	if o.MaxTokens <= 0 {
		o.MaxTokens = DefaultLedgerTokens
	}
	if o.UserTokens <= 0 {
		o.UserTokens = min(DefaultLedgerUserTokens, o.MaxTokens/2)
	}
	o.UserTokens = min(o.UserTokens, o.MaxTokens)
	if o.MaxCommands <= 0 {
		o.MaxCommands = DefaultLedgerCommands
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultLedgerFiles
	}
	return o
}

// Ledger derives the pinned ledger from a stored transcript (in Seq order)
// and its events, without a model, so no compaction can lose it: the
// user's messages verbatim (the newest and the first always, the others
// whole while they fit opts.UserTokens, then shortened or left out with a
// marker); the latest todo list (the last todo_write call); the last error
// (the latest failed tool result and the latest turn.failed event); the
// files read and changed (from read_file, write_file, edit_file and
// apply_patch calls that succeeded) with the hashes opts.Files knows; and
// the latest commands (run_command) with their exit status.
//
// It returns Markdown, "" when there is nothing to record, at most about
// opts.MaxTokens in size. It is a pure function: the same inputs give the
// same bytes. It parses every tool call's arguments, so compute it once per
// compaction (over the transcript up to the cut) and keep it in the
// Record, rather than on every request.
func Ledger(msgs []protocol.Message, events []protocol.Event, opts LedgerOptions) string {
	opts = opts.withDefaults()
	f := gather(msgs, events, opts.Root)
	maxBytes := opts.MaxTokens * bytesPerToken

	const header = "## Ledger\n\n"
	users := renderUsers(f.users, opts.UserTokens*bytesPerToken)
	rem := maxBytes - len(header) - len(users)
	todo := renderTodo(f.todo, rem*30/100)
	rem -= len(todo)
	lastErr := renderLastError(f, rem*25/100)
	rem -= len(lastErr)
	files := renderFiles(f.files, fileHashes(opts.Files), opts.MaxFiles, rem*60/100)
	rem -= len(files)
	cmds := renderCommands(f.commands, opts.MaxCommands, rem)

	parts := slices.DeleteFunc([]string{users, todo, lastErr, files, cmds}, func(s string) bool { return s == "" })
	if len(parts) == 0 {
		return ""
	}
	out := header + strings.Join(parts, "\n")
	if len(out) > maxBytes {
		// Only headings can push it over; cut at a line.
		out = cutHead(out, maxBytes-40, "")
		if i := strings.LastIndexByte(out, '\n'); i > 0 {
			out = out[:i+1]
		}
		out += "[ledger cut to its size limit]\n"
	}
	return out
}

// renderUsers shows the user's messages, oldest first, within budget
// bytes.
func renderUsers(users []userMsg, budget int) string {
	n := len(users)
	if n == 0 {
		return ""
	}
	// shown[i] is how many bytes of message i are shown; -1 leaves it out.
	shown := make([]int, n)
	firstReserve := 0
	if n > 1 {
		firstReserve = min(len(users[0].text), budget/4)
	}
	last := n - 1
	shown[last] = fitRange(budget-firstReserve-userHeaderBytes, 0, len(users[last].text))
	rem := budget - firstReserve - shown[last] - userHeaderBytes
	if n > 1 {
		rem -= userHeaderBytes // the first one's
	}
	shortening := false
	for i := last - 1; i >= 1; i-- {
		l := len(users[i].text)
		if !shortening && l+userHeaderBytes <= rem {
			shown[i] = l
			rem -= l + userHeaderBytes
			continue
		}
		shortening = true
		if ex := min(l, excerptBytes, rem-userHeaderBytes); ex >= minExcerptBytes {
			shown[i] = ex
			rem -= ex + userHeaderBytes
		} else {
			shown[i] = -1
		}
	}
	if n > 1 {
		shown[0] = fitRange(firstReserve+max(rem, 0), 0, len(users[0].text))
	}

	var b strings.Builder
	b.WriteString("### User messages (verbatim, oldest first)\n")
	var left []int64
	for i, u := range users {
		if shown[i] < 0 {
			left = append(left, u.seq)
			continue
		}
		if len(left) > 0 {
			writeLeftOut(&b, left)
			left = left[:0]
		}
		text := cutMiddle(u.text, shown[i], func(omitted int) string {
			return fmt.Sprintf("[… %d bytes not shown …]", omitted)
		})
		fmt.Fprintf(&b, "\nseq %d", u.seq)
		switch {
		case n == 1:
			b.WriteString(", the only message")
		case i == 0:
			b.WriteString(", the first message")
		case i == last:
			b.WriteString(", the latest message")
		}
		if shown[i] < len(u.text) {
			fmt.Fprintf(&b, " (shortened to %d of %d bytes)", shown[i], len(u.text))
		}
		fl := fence(text)
		fmt.Fprintf(&b, ":\n%s\n%s\n%s\n", fl, strings.TrimRight(text, "\n"), fl)
	}
	return b.String()
}

// writeLeftOut notes user messages that did not fit.
func writeLeftOut(b *strings.Builder, seqs []int64) {
	list := make([]string, 0, min(len(seqs), 10)+1)
	for _, s := range seqs[:min(len(seqs), 10)] {
		list = append(list, fmt.Sprint(s))
	}
	if len(seqs) > 10 {
		list = append(list, "…")
	}
	fmt.Fprintf(b, "\n(%d earlier messages not shown here: seq %s)\n", len(seqs), strings.Join(list, ", "))
}

// renderTodo shows the latest todo list within budget bytes.
func renderTodo(t *todoState, budget int) string {
	if t == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### Todo list (as last written, seq %d)\n", t.seq)
	items, ok := todoItems(t.args)
	if !ok {
		text := cutMiddle(t.args, budget-len(b.String())-20, func(omitted int) string {
			return fmt.Sprintf("[… %d bytes not shown …]", omitted)
		})
		fl := fence(text)
		fmt.Fprintf(&b, "%s\n%s\n%s\n", fl, text, fl)
		return b.String()
	}
	for i, it := range items {
		line := "- " + it + "\n"
		if b.Len()+len(line) > budget-40 {
			fmt.Fprintf(&b, "- … and %d more items\n", len(items)-i)
			break
		}
		b.WriteString(line)
	}
	return b.String()
}

// todoItems reads a todo_write call's arguments as lines "[x] text". It
// knows the common shape {"todos":[{"content":…,"status":…}]} and a few
// spellings of it.
func todoItems(args string) ([]string, bool) {
	var a map[string]any
	if json.Unmarshal([]byte(args), &a) != nil {
		return nil, false
	}
	var list []any
	for _, k := range []string{"todos", "items", "tasks"} {
		if l, ok := a[k].([]any); ok {
			list = l
			break
		}
	}
	if list == nil {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, raw := range list {
		it, ok := raw.(map[string]any)
		if !ok {
			if s, ok := raw.(string); ok {
				out = append(out, "[ ] "+oneLine(s))
				continue
			}
			return nil, false
		}
		text := firstString(it, "content", "text", "title", "task", "description")
		status := strings.ToLower(firstString(it, "status", "state"))
		box, note := "[ ]", ""
		switch status {
		case "completed", "complete", "done":
			box = "[x]"
		case "in_progress", "in-progress", "active", "doing":
			box, note = "[~]", " (in progress)"
		case "cancelled", "canceled":
			box, note = "[-]", " (cancelled)"
		}
		out = append(out, box+" "+cutHead(oneLine(text), 300, "…")+note)
	}
	return out, true
}

func firstString(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// renderLastError shows the latest failed tool result and the latest
// failed turn within budget bytes.
func renderLastError(f *facts, budget int) string {
	if f.toolErr == nil && f.failed == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("### Last error\n")
	each := budget / 2
	if f.toolErr == nil || f.failed == nil {
		each = budget
	}
	each = max(each-80, 60)
	if m := f.toolErr; m != nil {
		name := f.toolName
		if name == "" {
			name = "a tool"
		}
		text := cutMiddle(strings.TrimRight(m.Content, "\n"), each, func(omitted int) string {
			return fmt.Sprintf("[… %d bytes not shown …]", omitted)
		})
		fl := fence(text)
		fmt.Fprintf(&b, "The latest failed tool call, %s (seq %d):\n%s\n%s\n%s\n", name, m.Seq, fl, text, fl)
	}
	if e := f.failed; e != nil {
		fmt.Fprintf(&b, "The latest failed turn")
		if e.TurnID != "" {
			fmt.Fprintf(&b, " (%s)", e.TurnID)
		}
		fmt.Fprintf(&b, ": %s\n", cutHead(oneLine(e.Error), each, "…"))
	}
	return b.String()
}

// fileHashes maps cleaned paths to their latest SHA-256.
func fileHashes(files []protocol.FileVersion) map[string]string {
	m := make(map[string]string, len(files))
	for _, v := range files {
		m[filepath.Clean(v.Path)] = v.SHA256
	}
	return m
}

// hashOf finds the hash of e: by its key, else by a unique file whose path
// ends with e's shown path.
func hashOf(e *fileEntry, hashes map[string]string) string {
	if h, ok := hashes[e.key]; ok {
		return h
	}
	if filepath.IsAbs(e.shown) {
		return ""
	}
	suffix := string(filepath.Separator) + e.shown
	found := ""
	for p, h := range hashes {
		if strings.HasSuffix(p, suffix) {
			if found != "" && found != h {
				return "" // ambiguous
			}
			found = h
		}
	}
	return found
}

// renderFiles lists the files touched within budget bytes: changed ones
// first, then those only read, each sorted by path. When they do not all
// fit, the most recently touched changed files win.
func renderFiles(files map[string]*fileEntry, hashes map[string]string, maxFiles, budget int) string {
	if len(files) == 0 {
		return ""
	}
	all := make([]*fileEntry, 0, len(files))
	for _, e := range files {
		all = append(all, e)
	}
	// Priority: changed before read, then the latest first, then by path.
	slices.SortFunc(all, func(a, b *fileEntry) int {
		if a.changed() != b.changed() {
			if a.changed() {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(b.last, a.last), cmp.Compare(a.shown, b.shown))
	})
	const head = "### Files (sha256 of the latest version seen)\n"
	used := len(head) + 40
	lines := make(map[*fileEntry]string, len(all))
	var chosen []*fileEntry
	for _, e := range all {
		if len(chosen) >= maxFiles {
			break
		}
		line := fileLine(e, hashes)
		if used+len(line) > budget {
			break
		}
		used += len(line)
		lines[e] = line
		chosen = append(chosen, e)
	}
	slices.SortFunc(chosen, func(a, b *fileEntry) int {
		if a.changed() != b.changed() {
			if a.changed() {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.shown, b.shown)
	})
	var b strings.Builder
	b.WriteString(head)
	for _, e := range chosen {
		b.WriteString(lines[e])
	}
	if more := len(all) - len(chosen); more > 0 {
		fmt.Fprintf(&b, "- … and %d more files\n", more)
	}
	return b.String()
}

func fileLine(e *fileEntry, hashes map[string]string) string {
	var acts []string
	count := func(n int, what string) {
		switch {
		case n == 1:
			acts = append(acts, what)
		case n > 1:
			acts = append(acts, fmt.Sprintf("%s ×%d", what, n))
		}
	}
	if e.added {
		acts = append(acts, "created")
	}
	if e.movedFrom != "" {
		acts = append(acts, "moved from "+e.movedFrom)
	}
	count(e.wrote, "written")
	count(e.edited, "edited")
	count(e.patched, "patched")
	count(e.read, "read")
	if e.movedTo != "" {
		acts = append(acts, "moved to "+e.movedTo)
	}
	if e.deleted {
		acts = append(acts, "deleted")
	}
	line := "- " + e.shown + " — " + strings.Join(acts, ", ")
	if h := hashOf(e, hashes); h != "" && !e.deleted && e.movedTo == "" {
		line += " · sha256 " + h[:min(len(h), hashChars)]
	}
	return line + "\n"
}

// renderCommands lists the latest commands, oldest first, within budget
// bytes.
func renderCommands(cmds []command, maxCommands, budget int) string {
	if len(cmds) == 0 {
		return ""
	}
	const head = "### Commands run (oldest first)\n"
	used := len(head) + 50
	lines := make([]string, 0, min(len(cmds), maxCommands))
	for i := len(cmds) - 1; i >= 0 && len(lines) < maxCommands; i-- {
		c := cmds[i]
		line := fmt.Sprintf("- seq %d · %s · %s\n", c.seq, c.status, cutHead(oneLine(c.text), 300, "…"))
		if used+len(line) > budget {
			break
		}
		used += len(line)
		lines = append(lines, line)
	}
	var b strings.Builder
	b.WriteString(head)
	if earlier := len(cmds) - len(lines); earlier > 0 {
		fmt.Fprintf(&b, "- (%d earlier commands not shown)\n", earlier)
	}
	for i := len(lines) - 1; i >= 0; i-- {
		b.WriteString(lines[i])
	}
	return b.String()
}
