package plugins

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/mx-claw/mx-claw/internal/safefile"
)

// Dir is the folder of plugins under $MX_CLAW_HOME; StateFile the file
// that says which are enabled.
const (
	Dir       = "plugins"
	StateFile = "plugins.json"
)

// The places a manifest may be, inside a plugin's folder.
const (
	ClaudeManifest = ".claude-plugin/plugin.json"
	OwnManifest    = "plugin.json"
)

// maxManifest caps a manifest or a file it names.
const maxManifest = 1 << 20

// ErrNotFound is matched by the error for a plugin that is not installed.
var ErrNotFound = errors.New("no such plugin")

// Plugin is an installed plugin and what it brings.
type Plugin struct {
	// Folder is the plugin's folder name under plugins/; Name the
	// manifest's name (else the folder's), which prefixes its skills.
	Folder      string `json:"folder"`
	Name        string `json:"name"`
	Version     string `json:"version,omitempty"`
	Description string `json:"description,omitempty"`
	// Dir is the plugin's folder, absolute; Manifest its manifest.
	Dir      string `json:"dir"`
	Manifest string `json:"manifest"`
	Enabled  bool   `json:"enabled"`
	// SkillDirs are folders of skills; CommandDirs folders of command
	// files and CommandFiles single ones.
	SkillDirs    []string `json:"skillDirs,omitempty"`
	CommandDirs  []string `json:"commandDirs,omitempty"`
	CommandFiles []string `json:"commandFiles,omitempty"`
	// Hooks is the hooks object (Claude Code's settings "hooks") with
	// ${CLAUDE_PLUGIN_ROOT} replaced; HooksSource names where it came
	// from.
	Hooks       json.RawMessage `json:"hooks,omitempty"`
	HooksSource string          `json:"hooksSource,omitempty"`
	// MCPServers are its MCP servers by name, Claude Code's format, with
	// ${CLAUDE_PLUGIN_ROOT} replaced.
	MCPServers map[string]json.RawMessage `json:"mcpServers,omitempty"`
	// Notices say what loads but is not used, or was skipped.
	Notices []string `json:"notices,omitempty"`
}

// manifest is plugin.json. Paths are strings, or lists of strings for
// commands and skills; hooks and mcpServers may be objects.
type manifest struct {
	Name        string          `json:"name"`
	Version     string          `json:"version"`
	Description string          `json:"description"`
	Commands    json.RawMessage `json:"commands"`
	Skills      json.RawMessage `json:"skills"`
	Agents      json.RawMessage `json:"agents"`
	Hooks       json.RawMessage `json:"hooks"`
	MCPServers  json.RawMessage `json:"mcpServers"`
	OutputStyle json.RawMessage `json:"outputStyles"`
	LSPServers  json.RawMessage `json:"lspServers"`
}

// List returns the installed plugins, sorted by folder, each marked
// enabled or not, and warnings for folders that are not plugins or
// cannot be read.
func List(home string) ([]Plugin, []string) {
	root := filepath.Join(home, Dir)
	entries, err := os.ReadDir(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, []string{err.Error()}
	}
	st, stErr := loadState(home)
	var warnings []string
	if stErr != nil {
		warnings = append(warnings, stErr.Error())
	}
	var out []Plugin
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		p, err := Load(dir)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("plugin %s: %v", e.Name(), err))
			continue
		}
		_, p.Enabled = st.Enabled[p.Folder]
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Folder < out[j].Folder })
	return out, warnings
}

// Enabled returns the enabled plugins.
func Enabled(home string) ([]Plugin, []string) {
	all, warnings := List(home)
	var out []Plugin
	for _, p := range all {
		if p.Enabled {
			out = append(out, p)
		}
	}
	return out, warnings
}

// Load reads the plugin in dir: its manifest (Claude Code's or mx-claw's)
// and the parts it names or that are in their usual places.
func Load(dir string) (Plugin, error) {
	p := Plugin{Folder: filepath.Base(dir), Dir: dir}
	var m manifest
	for _, name := range []string{ClaudeManifest, OwnManifest} {
		data, err := safefile.ReadInTree(dir, filepath.FromSlash(name), maxManifest)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return p, err
		}
		if err := json.Unmarshal(data, &m); err != nil {
			return p, fmt.Errorf("%s is not valid JSON: %v", name, err)
		}
		p.Manifest = filepath.Join(dir, filepath.FromSlash(name))
		break
	}
	if p.Manifest == "" {
		return p, fmt.Errorf("no manifest (%s or %s)", ClaudeManifest, OwnManifest)
	}
	p.Name, p.Version, p.Description = strings.TrimSpace(m.Name), m.Version, m.Description
	if p.Name == "" || strings.ContainsAny(p.Name, " /\\:\t\n") {
		p.Name = p.Folder
	}
	var err error
	if p.SkillDirs, err = p.paths("skills", m.Skills, "skills"); err != nil {
		return p, err
	}
	cmds, err := p.paths("commands", m.Commands, "commands")
	if err != nil {
		return p, err
	}
	for _, c := range cmds {
		if fi, err := os.Stat(c); err == nil && !fi.IsDir() {
			p.CommandFiles = append(p.CommandFiles, c)
		} else {
			p.CommandDirs = append(p.CommandDirs, c)
		}
	}
	if err := p.loadHooks(m.Hooks); err != nil {
		return p, err
	}
	if err := p.loadServers(m.MCPServers); err != nil {
		return p, err
	}
	for _, unused := range []struct {
		field string
		raw   json.RawMessage
		dir   string
	}{{"agents", m.Agents, "agents"}, {"outputStyles", m.OutputStyle, ""}, {"lspServers", m.LSPServers, ""}} {
		present := len(unused.raw) > 0 && string(unused.raw) != "null"
		if !present && unused.dir != "" {
			_, err := os.Stat(filepath.Join(dir, unused.dir))
			present = err == nil
		}
		if present {
			p.Notices = append(p.Notices, fmt.Sprintf("plugin %s: its %s are not used by mx-claw", p.Name, unused.field))
		}
	}
	return p, nil
}

// paths reads a manifest field holding a path or a list of paths, or,
// when absent, the default folder if it exists. Every path must be inside
// the plugin's folder with no symbolic link on the way.
func (p *Plugin) paths(field string, raw json.RawMessage, def string) ([]string, error) {
	var rels []string
	switch {
	case len(raw) == 0 || string(raw) == "null":
		if _, err := os.Lstat(filepath.Join(p.Dir, def)); err != nil {
			return nil, nil
		}
		rels = []string{def}
	default:
		var one string
		if err := json.Unmarshal(raw, &one); err == nil {
			rels = []string{one}
		} else if err := json.Unmarshal(raw, &rels); err != nil {
			return nil, fmt.Errorf("manifest %q: want a path or a list of paths", field)
		}
	}
	var out []string
	for _, r := range rels {
		abs, err := p.inside(r)
		if err != nil {
			return nil, fmt.Errorf("manifest %q: %w", field, err)
		}
		out = append(out, abs)
	}
	return out, nil
}

// inside resolves a manifest path ("./x", "x") in the plugin's folder.
func (p *Plugin) inside(rel string) (string, error) {
	clean := filepath.Clean(filepath.FromSlash(strings.TrimSpace(rel)))
	if rel == "" || filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q is not inside the plugin's folder", rel)
	}
	cur := p.Dir
	if clean != "." {
		for _, c := range strings.Split(clean, string(filepath.Separator)) {
			cur = filepath.Join(cur, c)
			if fi, err := os.Lstat(cur); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				return "", fmt.Errorf("path %q passes through a symbolic link", rel)
			}
		}
	}
	return cur, nil
}

// loadHooks reads the hooks: inline in the manifest, a file it names, or
// hooks/hooks.json. A hooks file holds {"hooks": {...}} (and may hold a
// description); inline, the object is the events map itself.
func (p *Plugin) loadHooks(raw json.RawMessage) error {
	var text []byte
	switch {
	case len(raw) > 0 && raw[0] == '{':
		text, p.HooksSource = raw, p.Manifest+": hooks"
	default:
		rel := "hooks/hooks.json"
		if len(raw) > 0 && string(raw) != "null" {
			if err := json.Unmarshal(raw, &rel); err != nil {
				return errors.New(`manifest "hooks": want a path or an object`)
			}
		}
		abs, err := p.inside(rel)
		if err != nil {
			return fmt.Errorf(`manifest "hooks": %w`, err)
		}
		sub, _ := filepath.Rel(p.Dir, abs)
		data, err := safefile.ReadInTree(p.Dir, sub, maxManifest)
		if errors.Is(err, fs.ErrNotExist) && (len(raw) == 0 || string(raw) == "null") {
			return nil
		}
		if err != nil {
			return fmt.Errorf("hooks: %w", err)
		}
		var f struct {
			Hooks json.RawMessage `json:"hooks"`
		}
		if err := json.Unmarshal(data, &f); err != nil {
			return fmt.Errorf("%s is not valid JSON: %v", abs, err)
		}
		text, p.HooksSource = f.Hooks, abs
	}
	if len(text) == 0 || string(text) == "null" {
		return nil
	}
	p.Hooks = p.expandRoot(text)
	return nil
}

// loadServers reads the MCP servers: inline, a file the manifest names,
// or .mcp.json. A file holds {"mcpServers": {...}}, or the servers map
// itself.
func (p *Plugin) loadServers(raw json.RawMessage) error {
	var text []byte
	switch {
	case len(raw) > 0 && raw[0] == '{':
		text = raw
	default:
		rel := ".mcp.json"
		if len(raw) > 0 && string(raw) != "null" {
			if err := json.Unmarshal(raw, &rel); err != nil {
				return errors.New(`manifest "mcpServers": want a path or an object`)
			}
		}
		abs, err := p.inside(rel)
		if err != nil {
			return fmt.Errorf(`manifest "mcpServers": %w`, err)
		}
		sub, _ := filepath.Rel(p.Dir, abs)
		data, err := safefile.ReadInTree(p.Dir, sub, maxManifest)
		if errors.Is(err, fs.ErrNotExist) && (len(raw) == 0 || string(raw) == "null") {
			return nil
		}
		if err != nil {
			return fmt.Errorf("mcpServers: %w", err)
		}
		text = data
	}
	var wrapped struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(text, &wrapped); err == nil && wrapped.MCPServers != nil {
		p.MCPServers = wrapped.MCPServers
	} else if err := json.Unmarshal(text, &p.MCPServers); err != nil {
		return fmt.Errorf("mcpServers: want an object of servers: %v", err)
	}
	for k, v := range p.MCPServers {
		p.MCPServers[k] = p.expandRoot(v)
	}
	return nil
}

// expandRoot replaces ${CLAUDE_PLUGIN_ROOT} and $CLAUDE_PLUGIN_ROOT in a
// JSON text with the plugin's folder.
func (p *Plugin) expandRoot(raw []byte) json.RawMessage {
	root, _ := json.Marshal(p.Dir)
	inner := root[1 : len(root)-1] // the path as a JSON string's content
	out := bytes.ReplaceAll(raw, []byte("${CLAUDE_PLUGIN_ROOT}"), inner)
	out = bytes.ReplaceAll(out, []byte("$CLAUDE_PLUGIN_ROOT"), inner)
	return out
}

// state is plugins.json.
type state struct {
	Version int                     `json:"version"`
	Enabled map[string]enabledEntry `json:"enabled"`
}

type enabledEntry struct {
	EnabledAt time.Time `json:"enabledAt"`
}

func loadState(home string) (state, error) {
	st := state{Version: 1, Enabled: map[string]enabledEntry{}}
	data, err := safefile.ReadFile(filepath.Join(home, StateFile), maxManifest)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return state{Version: 1, Enabled: map[string]enabledEntry{}}, fmt.Errorf("%s is not valid JSON (%v); no plugin is enabled until it is fixed", StateFile, err)
	}
	if st.Enabled == nil {
		st.Enabled = map[string]enabledEntry{}
	}
	return st, nil
}

// find returns the installed plugin a person names by folder or name.
func find(home, name string) (Plugin, error) {
	all, _ := List(home)
	for _, p := range all {
		if p.Folder == name {
			return p, nil
		}
	}
	for _, p := range all {
		if p.Name == name {
			return p, nil
		}
	}
	return Plugin{}, fmt.Errorf("%w: %s (`mx-claw plugins list` shows the installed ones)", ErrNotFound, name)
}

// Enable marks a plugin enabled; it acts from the next session on.
func Enable(home, name string) (Plugin, error) { return setEnabled(home, name, true) }

// Disable marks a plugin disabled.
func Disable(home, name string) (Plugin, error) { return setEnabled(home, name, false) }

func setEnabled(home, name string, on bool) (Plugin, error) {
	p, err := find(home, name)
	if err != nil {
		return p, err
	}
	st, err := loadState(home)
	if err != nil && on {
		return p, err
	}
	if on {
		st.Enabled[p.Folder] = enabledEntry{EnabledAt: time.Now().UTC()}
	} else {
		delete(st.Enabled, p.Folder)
	}
	data, _ := json.MarshalIndent(st, "", "  ")
	if err := writeAtomic(filepath.Join(home, StateFile), append(data, '\n')); err != nil {
		return p, err
	}
	p.Enabled = on
	return p, nil
}

// writeAtomic replaces path with data through a synced temporary file.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
