package compact

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// The built-in tools whose calls the ledger reads (DESIGN §6).
const (
	toolReadFile   = "read_file"
	toolWriteFile  = "write_file"
	toolEditFile   = "edit_file"
	toolApplyPatch = "apply_patch"
	toolRunCommand = "run_command"
	toolTodoWrite  = "todo_write"
)

// facts is what the ledger is made of, gathered in one pass over the
// transcript.
type facts struct {
	users    []userMsg
	files    map[string]*fileEntry // by key
	commands []command
	todo     *todoState
	toolErr  *protocol.Message // the latest tool result with IsError
	toolName string            // the tool of toolErr
	failed   *protocol.Event   // the latest turn.failed
}

type userMsg struct {
	seq  int64
	text string
}

// fileEntry is what the session did to one file.
type fileEntry struct {
	key, shown                   string
	read, wrote, edited, patched int
	added, deleted               bool
	movedTo, movedFrom           string
	last                         int64 // the Seq of the last call that touched it
}

func (f *fileEntry) changed() bool {
	return f.wrote+f.edited+f.patched > 0 || f.added || f.deleted || f.movedTo != "" || f.movedFrom != ""
}

type command struct {
	seq    int64
	text   string
	status string
}

type todoState struct {
	seq  int64
	args string
}

// gather walks msgs and events once.
func gather(msgs []protocol.Message, events []protocol.Event, root string) *facts {
	f := &facts{files: make(map[string]*fileEntry)}
	if root != "" {
		root = filepath.Clean(root)
	}
	var calls []protocol.ToolCall // of the last assistant message
	for i := 0; i < len(msgs); i++ {
		m := &msgs[i]
		switch m.Role {
		case protocol.RoleUser:
			f.users = append(f.users, userMsg{seq: m.Seq, text: m.Content})
		case protocol.RoleTool:
			if m.IsError {
				f.toolErr, f.toolName = m, m.ToolName
				for _, c := range calls {
					if f.toolName == "" && c.ID == m.ToolCallID {
						f.toolName = c.Name
					}
				}
			}
		case protocol.RoleAssistant:
			calls = m.ToolCalls
			if len(m.ToolCalls) == 0 {
				continue
			}
			j := i + 1
			for j < len(msgs) && msgs[j].Role == protocol.RoleTool {
				j++
			}
			block := msgs[i+1 : j]
			for _, c := range m.ToolCalls {
				f.call(c, resultFor(block, c.ID), m.Seq, root)
			}
		}
	}
	for i := range events {
		if events[i].Type == protocol.EventTurnFailed {
			f.failed = &events[i]
		}
	}
	return f
}

// call records what one tool call did, given its result r (nil when none
// was recorded). File actions count only when they succeeded.
func (f *facts) call(c protocol.ToolCall, r *protocol.Message, seq int64, root string) {
	ok := r != nil && !r.IsError
	switch c.Name {
	case toolReadFile, toolWriteFile, toolEditFile:
		if !ok {
			return
		}
		var a struct {
			Path string `json:"path"`
		}
		if json.Unmarshal([]byte(c.Arguments), &a) != nil || strings.TrimSpace(a.Path) == "" {
			return
		}
		e := f.file(a.Path, root, seq)
		switch c.Name {
		case toolReadFile:
			e.read++
		case toolWriteFile:
			e.wrote++
		default:
			e.edited++
		}
	case toolApplyPatch:
		if !ok {
			return
		}
		var a struct {
			Patch string `json:"patch"`
		}
		if json.Unmarshal([]byte(c.Arguments), &a) != nil {
			return
		}
		f.patch(a.Patch, root, seq)
	case toolRunCommand:
		var a struct {
			Command string `json:"command"`
		}
		text := c.Arguments
		if json.Unmarshal([]byte(c.Arguments), &a) == nil && a.Command != "" {
			text = a.Command
		}
		f.commands = append(f.commands, command{seq: seq, text: text, status: commandStatus(r)})
	case toolTodoWrite:
		if ok {
			f.todo = &todoState{seq: seq, args: c.Arguments}
		}
	}
}

// patch records the files of an apply_patch patch: its "*** Add File:",
// "*** Update File:", "*** Delete File:" and "*** Move to:" lines.
func (f *facts) patch(text, root string, seq int64) {
	var updated *fileEntry
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		if !strings.HasPrefix(line, "*** ") {
			continue
		}
		verb, path, found := strings.Cut(line[4:], ":")
		path = strings.TrimSpace(path)
		if !found || path == "" {
			continue
		}
		switch verb {
		case "Add File":
			f.file(path, root, seq).added = true
			updated = nil
		case "Update File":
			updated = f.file(path, root, seq)
			updated.patched++
		case "Delete File":
			f.file(path, root, seq).deleted = true
			updated = nil
		case "Move to":
			if updated != nil {
				to := f.file(path, root, seq)
				updated.movedTo, to.movedFrom = to.shown, updated.shown
				updated = nil
			}
		}
	}
}

// file returns the entry of path, made if new.
func (f *facts) file(path, root string, seq int64) *fileEntry {
	key, shown := normalizePath(path, root)
	e := f.files[key]
	if e == nil {
		e = &fileEntry{key: key, shown: shown}
		f.files[key] = e
	}
	e.last = max(e.last, seq)
	return e
}

// normalizePath returns the key of a tool's path argument (absolute when
// root is known) and the path as shown (relative to root when inside it).
func normalizePath(p, root string) (key, shown string) {
	p = strings.TrimSpace(p)
	switch {
	case filepath.IsAbs(p):
		key = filepath.Clean(p)
	case root != "":
		key = filepath.Join(root, p)
	default:
		return filepath.Clean(p), filepath.Clean(p)
	}
	shown = key
	if root != "" {
		if rel, err := filepath.Rel(root, key); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			shown = rel
		}
	}
	return key, shown
}

// commandStatus reads how a run_command call ended from its result: the
// "[exit code N, 1.2s]" or "[command timed out …]" line run_command ends
// with, or the reason it failed.
func commandStatus(r *protocol.Message) string {
	if r == nil {
		return "no result recorded (interrupted)"
	}
	c := strings.TrimRight(r.Content, " \r\n")
	if strings.HasSuffix(c, "]") {
		if i := strings.LastIndex(c, "[exit code "); i >= 0 {
			inner := c[i+len("[exit code ") : len(c)-1]
			code, rest, _ := strings.Cut(inner, ",")
			if _, err := strconv.Atoi(code); err == nil {
				s := "exit " + code
				if rest = strings.TrimSpace(rest); rest != "" {
					s += " (" + rest + ")"
				}
				return s
			}
		}
		if i := strings.LastIndex(c, "[command timed out"); i >= 0 {
			return c[i+1 : len(c)-1]
		}
	}
	if r.IsError {
		line, _, _ := strings.Cut(strings.TrimPrefix(c, "Tool failed: "), "\n")
		return "failed: " + cutHead(line, 200, "…")
	}
	return "done"
}
