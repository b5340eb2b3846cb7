package skills

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/mx-claw/mx-claw/internal/tools"
)

//go:embed tool.md
var toolDescription string

// ToolName is the skill tool's name (DESIGN §6 contract: it takes name).
const ToolName = "skill"

const toolSchema = `{
  "type": "object",
  "properties": {
    "name": {"type": "string", "description": "The skill's name, as the system prompt lists it."},
    "file": {"type": "string", "description": "A file of the skill's folder to read, relative to the folder."},
    "query": {"type": "string", "description": "Words to search all skills for, instead of loading one."}
  },
  "additionalProperties": false
}`

// maxSkillFileBytes caps a file of a skill read through the tool.
const maxSkillFileBytes = 256 << 10

// searchResults is how many skills a search returns.
const searchResults = 10

// Lookup returns the skills a session may load: the list frozen at its
// first turn.
type Lookup func(ctx context.Context, sessionID string) (*Catalog, error)

// NewTool returns the skill tool. lookup gives it each session's frozen
// list of skills.
func NewTool(lookup Lookup) tools.Tool { return &skillTool{lookup: lookup} }

type skillTool struct{ lookup Lookup }

type toolArgs struct {
	Name  string `json:"name"`
	File  string `json:"file"`
	Query string `json:"query"`
}

// toolInfo is what the skill tool is to the agent; Info returns it, shared.
var toolInfo = tools.Info{Name: ToolName, Description: toolDescription, Schema: json.RawMessage(toolSchema),
	Risk: tools.RiskRead, ConcurrencySafe: true}

func (*skillTool) Info() tools.Info { return toolInfo }

func (*skillTool) Summary(args json.RawMessage) string {
	var a toolArgs
	_ = json.Unmarshal(args, &a)
	switch {
	case a.Name != "" && a.File != "":
		return fmt.Sprintf("Read %s of skill %s", a.File, a.Name)
	case a.Name != "":
		return "Load skill " + a.Name
	case a.Query != "":
		return fmt.Sprintf("Search skills for %q", a.Query)
	}
	return "Skill"
}

func (t *skillTool) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	var a toolArgs
	if text := bytes.TrimSpace(args); len(text) > 0 {
		if err := json.Unmarshal(text, &a); err != nil {
			return tools.Result{}, fmt.Errorf("decode arguments: %w", err)
		}
	}
	a.Name, a.Query = strings.TrimSpace(a.Name), strings.TrimSpace(a.Query)
	if a.Name == "" && a.Query == "" {
		return tools.Result{}, errors.New("give the name of a skill to load, or a query to search skills")
	}
	sessionID := ""
	if env != nil {
		sessionID = env.SessionID
	}
	cat, err := t.lookup(ctx, sessionID)
	if err != nil {
		return tools.Result{}, err
	}
	if cat == nil || cat.Len() == 0 {
		return tools.Result{Content: "This session has no skills: none were installed when it started.", IsError: true}, nil
	}
	if a.Name == "" {
		return tools.Result{Content: searchText(cat, a.Query)}, nil
	}
	s, ok := cat.Lookup(a.Name)
	if !ok {
		msg := fmt.Sprintf("No skill named %q in this session.", a.Name)
		if near := cat.Search(a.Name+" "+a.Query, 3); len(near) > 0 {
			names := make([]string, len(near))
			for i, n := range near {
				names[i] = n.Name
			}
			msg += " Similar: " + strings.Join(names, ", ") + "."
		}
		return tools.Result{Content: msg, IsError: true}, nil
	}
	if a.File != "" {
		return readSkillFile(s, a.File)
	}
	return loadText(s, env)
}

// searchText lists the skills matching query.
func searchText(cat *Catalog, query string) string {
	found := cat.Search(query, searchResults)
	if len(found) == 0 {
		return fmt.Sprintf("No skill matches %q (%d skills in all).", query, cat.Len())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Skills matching %q, best first (load one with its name):\n", query)
	for _, s := range found {
		fmt.Fprintf(&b, "- %s: %s\n", s.Name, s.Description)
	}
	return strings.TrimRight(b.String(), "\n")
}

// loadText is what loading a skill returns: its instructions and its other
// files.
func loadText(s Skill, env *tools.Env) (tools.Result, error) {
	doc, err := s.Load()
	if err != nil {
		return tools.Result{}, fmt.Errorf("load skill %s: %w", s.Name, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Skill %s (folder %s). Follow these instructions for the task; paths in them are relative to the skill's folder.\n",
		s.Name, s.Dir)
	b.WriteString("<skill-instructions>\n")
	b.WriteString(strings.TrimSpace(expandDirs(doc.Body, s)))
	b.WriteString("\n</skill-instructions>")
	if len(doc.AllowedTools) > 0 {
		fmt.Fprintf(&b, "\nThe skill names the tools it uses: %s (the permission rules still apply).", strings.Join(doc.AllowedTools, ", "))
	}
	files, more, err := s.Files()
	switch {
	case err != nil:
		fmt.Fprintf(&b, "\nIts other files could not be listed: %v", err)
	case len(files) == 0:
		b.WriteString("\nThe skill has no other files.")
	default:
		inWS := ""
		if env != nil && env.Workspace != nil {
			if rel, err := filepath.Rel(env.Workspace.Root(), s.Dir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				inWS = filepath.ToSlash(rel)
			}
		}
		fmt.Fprintf(&b, "\nOther files of the skill; read one with %s {\"name\": %q, \"file\": PATH}", ToolName, s.Name)
		if inWS != "" {
			fmt.Fprintf(&b, " or with read_file at %s/PATH", inWS)
		}
		b.WriteString(":")
		for _, f := range files {
			fmt.Fprintf(&b, "\n- %s (%s)", f.Path, size(f.Size))
		}
		if more {
			b.WriteString("\n- … more files not listed")
		}
	}
	return tools.Result{Content: b.String()}, nil
}

// readSkillFile returns one text file of a skill's folder.
func readSkillFile(s Skill, file string) (tools.Result, error) {
	data, err := s.readFile(file, maxSkillFileBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return tools.Result{Content: fmt.Sprintf("Skill %s has no file %s.", s.Name, file), IsError: true}, nil
	case err != nil:
		return tools.Result{}, err
	case bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data):
		return tools.Result{Content: fmt.Sprintf("%s of skill %s is not text (%s); it can be run or copied, not read.", file, s.Name, size(int64(len(data)))), IsError: true}, nil
	}
	return tools.Result{Content: string(data)}, nil
}

// size formats a byte count for the model: "512 B", "4.2 KiB".
func size(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// expandDirs replaces the folder variables of Claude Code's skills:
// ${CLAUDE_SKILL_DIR} (the skill's folder) and, in a plugin's skill,
// ${CLAUDE_PLUGIN_ROOT} (the plugin's folder).
func expandDirs(body string, s Skill) string {
	body = strings.ReplaceAll(body, "${CLAUDE_SKILL_DIR}", s.Dir)
	if strings.HasPrefix(s.Source, "plugin:") && s.Base != "" {
		body = strings.ReplaceAll(body, "${CLAUDE_PLUGIN_ROOT}", s.Base)
	}
	return body
}
