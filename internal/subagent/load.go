package subagent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/mx-claw/mx-claw/internal/frontmatter"
	"github.com/mx-claw/mx-claw/internal/safefile"
)

// maxFile caps one agent file.
const maxFile = 256 << 10

// LoadOptions say where to look for agent files.
type LoadOptions struct {
	// Home is $MX_CLAW_HOME; its agents/ folder is read if set.
	Home string
	// Workspace is the session's workspace; its .claude/agents/ and
	// .mx-claw/agents/ folders are read only if Trusted.
	Workspace string
	Trusted   bool
}

// Load returns the built-in subagent types and the user-defined ones, in
// a stable order (built-ins first, then by name), with a warning for each
// file that could not be used.
func Load(o LoadOptions) ([]Definition, []string) {
	byName := map[string]Definition{}
	var warnings []string
	for _, d := range BuiltIn() {
		byName[d.Name] = d
	}
	add := func(defs []Definition, warns []string) {
		warnings = append(warnings, warns...)
		for _, d := range defs {
			byName[d.Name] = d
		}
	}
	if o.Home != "" {
		add(loadDir(filepath.Join(o.Home, "agents"), func(name string) ([]byte, error) {
			return safefile.ReadFile(filepath.Join(o.Home, "agents", name), maxFile)
		}))
	}
	if o.Trusted && o.Workspace != "" {
		for _, rel := range []string{".claude/agents", ".mx-claw/agents"} {
			add(loadDir(filepath.Join(o.Workspace, rel), func(name string) ([]byte, error) {
				return safefile.ReadInTree(o.Workspace, rel+"/"+name, maxFile)
			}))
		}
	}
	out := make([]Definition, 0, len(byName))
	for _, d := range byName {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		bi, bj := out[i].Source == "built-in", out[j].Source == "built-in"
		if bi != bj {
			return bi
		}
		return out[i].Name < out[j].Name
	})
	return out, warnings
}

// loadDir reads the *.md files of dir (not its subfolders) with read.
func loadDir(dir string, read func(name string) ([]byte, error)) ([]Definition, []string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, []string{fmt.Sprintf("subagents: %s: %v", dir, err)}
	}
	var defs []Definition
	var warnings []string
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := read(e.Name())
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("subagent file %s skipped: %v", path, err))
			continue
		}
		d, err := Parse(data, strings.TrimSuffix(e.Name(), ".md"))
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("subagent file %s skipped: %v", path, err))
			continue
		}
		d.Source = path
		defs = append(defs, d)
	}
	return defs, warnings
}

// validName is what a subagent type may be called: what the model writes
// as subagent_type.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$`)

// front is an agent file's front matter.
type front struct {
	Name        string           `yaml:"name"`
	Description string           `yaml:"description"`
	Tools       frontmatter.List `yaml:"tools"`
	Disallowed  frontmatter.List `yaml:"disallowedTools"`
	Model       string           `yaml:"model"`
	MaxTurns    string           `yaml:"maxTurns"`
}

// Parse reads one agent file. fallbackName names the file in the error
// for a front matter without a name.
func Parse(data []byte, fallbackName string) (Definition, error) {
	var f front
	res, err := frontmatter.Parse(data, &f)
	if errors.Is(err, frontmatter.ErrNoFrontMatter) {
		return Definition{}, errors.New("no front matter (a --- block with name and description)")
	}
	if err != nil {
		return Definition{}, err
	}
	d := Definition{
		Name:        strings.TrimSpace(f.Name),
		Description: strings.TrimSpace(f.Description),
		Prompt:      strings.TrimSpace(res.Body),
		Model:       modelOf(f.Model),
	}
	if d.Name == "" {
		return Definition{}, fmt.Errorf("no name in the front matter (the file %s.md needs `name: …`)", fallbackName)
	}
	if !validName.MatchString(d.Name) {
		return Definition{}, fmt.Errorf("name %q: use letters, digits, '-', '_', '.' or ':'", d.Name)
	}
	if d.Description == "" {
		return Definition{}, fmt.Errorf("subagent %q has no description", d.Name)
	}
	if len(f.Tools) > 0 {
		// An empty tools field means all tools, as if it were left out.
		d.Tools = toolNames(f.Tools)
	}
	if len(f.Disallowed) > 0 {
		d.Disallowed = toolNames(f.Disallowed)
	}
	if v := strings.TrimSpace(f.MaxTurns); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return Definition{}, fmt.Errorf("subagent %q: maxTurns %q is not a positive number", d.Name, v)
		}
		d.MaxTurns = n
	}
	return d, nil
}
