package sessionio

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	_ "modernc.org/sqlite" // opencode.db

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// opencode keeps sessions in its data directory ($XDG_DATA_HOME/opencode):
// older versions as JSON files, storage/session/<project>/<session>.json
// (id, title, directory, time), storage/message/<session>/<message>.json
// (role, time, model) and storage/part/<message>/<part>.json; newer ones in
// opencode.db, an SQLite database whose session, message and part tables
// hold the same records (a message's and a part's fields in a JSON "data"
// column). A message is a list of parts: text, reasoning, tool (callID,
// tool, state with input and output or error), step-start and step-finish
// (with token counts), and file, snapshot, patch, agent, subtask, retry,
// compaction.

type opencodeSession struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Directory string `json:"directory"`
	Time      struct {
		Created int64 `json:"created"`
		Updated int64 `json:"updated"`
	} `json:"time"`
}

type opencodeMessage struct {
	ID      string `json:"id"`
	Role    string `json:"role"`
	ModelID string `json:"modelID"`
	Model   struct {
		ModelID string `json:"modelID"`
	} `json:"model"`
	Time struct {
		Created int64 `json:"created"`
	} `json:"time"`
	parts []opencodePart
}

type opencodePart struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Text     string `json:"text"`
	Filename string `json:"filename"`
	CallID   string `json:"callID"`
	Tool     string `json:"tool"`
	State    struct {
		Status string          `json:"status"`
		Input  json.RawMessage `json:"input"`
		Output string          `json:"output"`
		Error  string          `json:"error"`
	} `json:"state"`
	Tokens *struct {
		Input     int64 `json:"input"`
		Output    int64 `json:"output"`
		Reasoning int64 `json:"reasoning"`
		Cache     struct {
			Read int64 `json:"read"`
		} `json:"cache"`
	} `json:"tokens"`
	raw []byte
}

// readOpencode reads every session under an opencode data directory, its
// storage directory, or an opencode.db file.
func readOpencode(path string) ([]*Session, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return readOpencodeDB(path)
	}
	var out []*Session
	for _, db := range []string{filepath.Join(path, "opencode.db")} {
		if _, err := os.Stat(db); err == nil {
			list, err := readOpencodeDB(db)
			if err != nil {
				return nil, err
			}
			out = append(out, list...)
		}
	}
	storage := path
	if _, err := os.Stat(filepath.Join(path, "storage", "session")); err == nil {
		storage = filepath.Join(path, "storage")
	}
	if _, err := os.Stat(filepath.Join(storage, "session")); err == nil {
		list, err := readOpencodeFiles(storage)
		if err != nil {
			return nil, err
		}
		out = append(out, list...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no opencode sessions in %s (looked for opencode.db and storage/session/)", path)
	}
	return out, nil
}

// readOpencodeFiles reads the JSON-file layout.
func readOpencodeFiles(storage string) ([]*Session, error) {
	files, err := listFiles(filepath.Join(storage, "session"), func(name string) bool { return strings.HasSuffix(name, ".json") })
	if err != nil {
		return nil, err
	}
	var out []*Session
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var info opencodeSession
		if json.Unmarshal(data, &info) != nil || info.ID == "" {
			continue
		}
		var msgs []opencodeMessage
		msgFiles, _ := listFiles(filepath.Join(storage, "message", info.ID), func(n string) bool { return strings.HasSuffix(n, ".json") })
		for _, mf := range msgFiles {
			data, err := os.ReadFile(mf)
			if err != nil {
				return nil, err
			}
			var m opencodeMessage
			if json.Unmarshal(data, &m) != nil {
				continue
			}
			partFiles, _ := listFiles(filepath.Join(storage, "part", m.ID), func(n string) bool { return strings.HasSuffix(n, ".json") })
			for _, pf := range partFiles {
				data, err := os.ReadFile(pf)
				if err != nil {
					return nil, err
				}
				var p opencodePart
				if json.Unmarshal(data, &p) != nil {
					continue
				}
				p.raw = data
				m.parts = append(m.parts, p)
			}
			msgs = append(msgs, m)
		}
		out = append(out, opencodeSessionOf(info, msgs, f))
	}
	return out, nil
}

// readOpencodeDB reads the SQLite layout, read-only.
func readOpencodeDB(path string) ([]*Session, error) {
	dsn := "file:" + (&url.URL{Path: filepath.ToSlash(path)}).EscapedPath() + "?mode=ro&_pragma=busy_timeout(5000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer db.Close()
	ctx := context.Background()
	rows, err := db.QueryContext(ctx, `SELECT id, title, directory, time_created, time_updated FROM session ORDER BY time_created`)
	if err != nil {
		return nil, fmt.Errorf("read opencode sessions in %s: %w", path, err)
	}
	var infos []opencodeSession
	for rows.Next() {
		var s opencodeSession
		if err := rows.Scan(&s.ID, &s.Title, &s.Directory, &s.Time.Created, &s.Time.Updated); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read opencode sessions in %s: %w", path, err)
		}
		infos = append(infos, s)
	}
	rows.Close()
	var out []*Session
	for _, info := range infos {
		msgs, err := opencodeDBMessages(ctx, db, info.ID)
		if err != nil {
			return nil, fmt.Errorf("read opencode session %s in %s: %w", info.ID, path, err)
		}
		out = append(out, opencodeSessionOf(info, msgs, path))
	}
	return out, nil
}

func opencodeDBMessages(ctx context.Context, db *sql.DB, sessionID string) ([]opencodeMessage, error) {
	rows, err := db.QueryContext(ctx, `SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id`, sessionID)
	if err != nil {
		return nil, err
	}
	var msgs []opencodeMessage
	for rows.Next() {
		var id string
		var data []byte
		if err := rows.Scan(&id, &data); err != nil {
			rows.Close()
			return nil, err
		}
		var m opencodeMessage
		json.Unmarshal(data, &m)
		m.ID = id
		msgs = append(msgs, m)
	}
	rows.Close()
	for i := range msgs {
		prow, err := db.QueryContext(ctx, `SELECT id, data FROM part WHERE message_id = ? ORDER BY id`, msgs[i].ID)
		if err != nil {
			return nil, err
		}
		for prow.Next() {
			var id string
			var data []byte
			if err := prow.Scan(&id, &data); err != nil {
				prow.Close()
				return nil, err
			}
			var p opencodePart
			json.Unmarshal(data, &p)
			p.ID, p.raw = id, data
			msgs[i].parts = append(msgs[i].parts, p)
		}
		prow.Close()
	}
	return msgs, nil
}

// opencodeSessionOf maps an opencode session's messages and parts.
func opencodeSessionOf(info opencodeSession, msgs []opencodeMessage, path string) *Session {
	s := &Session{Source: SourceOpencode, SourceID: info.ID, Path: path, Title: info.Title, Workspace: info.Directory,
		CreatedAt: msTime(info.Time.Created), UpdatedAt: msTime(info.Time.Updated)}
	slices.SortStableFunc(msgs, func(a, b opencodeMessage) int {
		if a.Time.Created != b.Time.Created {
			return int(a.Time.Created - b.Time.Created)
		}
		return strings.Compare(a.ID, b.ID)
	})
	ids := &callIDs{}
	for _, m := range msgs {
		slices.SortStableFunc(m.parts, func(a, b opencodePart) int { return strings.Compare(a.ID, b.ID) })
		if model := cmp.Or(m.Model.ModelID, m.ModelID); model != "" {
			s.Model = model
		}
		if m.Role == "user" {
			user := protocol.Message{Role: protocol.RoleUser}
			for _, p := range m.parts {
				switch p.Type {
				case "text":
					user.Content = joinText(user.Content, p.Text)
				case "file":
					user.Content = joinText(user.Content, "[file "+p.Filename+"]")
					s.Notes = append(s.Notes, noteOf("opencode file part", p.raw))
				default:
					s.Notes = append(s.Notes, noteOf("opencode user part "+p.Type, p.raw))
				}
			}
			if user.Content != "" {
				s.Messages = append(s.Messages, user)
			}
			continue
		}
		var cur *protocol.Message
		var results []protocol.Message
		flush := func() {
			if cur != nil {
				s.Messages = append(s.Messages, *cur)
				s.Messages = append(s.Messages, results...)
			}
			cur, results = nil, nil
		}
		open := func() *protocol.Message {
			if cur == nil {
				cur = &protocol.Message{Role: protocol.RoleAssistant}
			}
			return cur
		}
		for _, p := range m.parts {
			switch p.Type {
			case "text":
				if cur != nil && len(cur.ToolCalls) > 0 {
					flush()
				}
				a := open()
				a.Content = joinText(a.Content, p.Text)
			case "reasoning":
				if cur != nil && len(cur.ToolCalls) > 0 {
					flush()
				}
				a := open()
				a.Reasoning = joinText(a.Reasoning, p.Text)
			case "tool":
				id := ids.fresh(p.CallID)
				open().ToolCalls = append(cur.ToolCalls, protocol.ToolCall{ID: id, Name: p.Tool, Arguments: jsonText(p.State.Input)})
				switch p.State.Status {
				case "completed":
					results = append(results, protocol.Message{Role: protocol.RoleTool, ToolCallID: id, ToolName: p.Tool, Content: p.State.Output})
				case "error":
					results = append(results, protocol.Message{Role: protocol.RoleTool, ToolCallID: id, ToolName: p.Tool, Content: p.State.Error, IsError: true})
				}
			case "step-start":
				// A step's start: its snapshot hash is opencode's own.
			case "step-finish":
				if p.Tokens != nil && cur != nil {
					cur.Usage = &protocol.Usage{InputTokens: p.Tokens.Input, OutputTokens: p.Tokens.Output,
						ReasoningTokens: p.Tokens.Reasoning, CachedTokens: p.Tokens.Cache.Read}
				}
			default:
				s.Notes = append(s.Notes, noteOf("opencode part "+p.Type, p.raw))
			}
		}
		flush()
	}
	finish(s)
	return s
}

func msTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
