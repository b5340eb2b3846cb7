package slashcmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/mx-claw/mx-claw/internal/frontmatter"
	"github.com/mx-claw/mx-claw/internal/safefile"
)

// maxFileBytes caps a command file.
const maxFileBytes = 256 << 10

// maxDepth is how deep under a commands folder files are looked for.
const maxDepth = 3

// maxCommands caps the commands Discover returns.
const maxCommands = 500

// ErrNotFound is matched by the error for an unknown command.
var ErrNotFound = errors.New("no such command")

// Command is a custom slash command as found on disk.
type Command struct {
	// Name is what follows the slash.
	Name string `json:"name"`
	// Description is the front matter's, else the body's first line.
	Description string `json:"description"`
	// ArgumentHint shows what arguments the command takes ("[file]").
	ArgumentHint string `json:"argumentHint,omitempty"`
	// AllowedTools are the tools its turn may use without asking, as
	// written (Claude Code's or mx-claw's rule syntax).
	AllowedTools []string `json:"allowedTools,omitempty"`
	// Model is the model of its turn, if the file names one.
	Model string `json:"model,omitempty"`
	// Path is the file, absolute.
	Path string `json:"path"`
	// Source is "user", "project" or "plugin:NAME".
	Source string `json:"source"`
	// Base, if set, is the tree the file lies in; no link in it is
	// followed. PluginRoot is the plugin's folder, for
	// ${CLAUDE_PLUGIN_ROOT}.
	Base       string `json:"-"`
	PluginRoot string `json:"-"`
}

// Root is a folder of command files.
type Root struct {
	Dir    string
	Source string
	// Base confines reads to a tree (see Command.Base).
	Base string
	// PluginRoot is set for a plugin's commands.
	PluginRoot string
	// Namespace, if set, names a command whose plain name an earlier
	// root took: "NAMESPACE:name" (a plugin's commands, as in Claude
	// Code).
	Namespace string
}

type front struct {
	Description  string           `yaml:"description"`
	ArgumentHint string           `yaml:"argument-hint"`
	AllowedTools frontmatter.List `yaml:"allowed-tools"`
	Model        string           `yaml:"model"`
}

// Discover finds the commands of the roots, in order; a name found twice
// keeps the first, with a warning. Missing folders are skipped silently.
// The result is sorted by name.
func Discover(roots []Root) ([]Command, []string) {
	var out []Command
	var warnings []string
	seen := make(map[string]string)
	for _, r := range roots {
		found, warns := discoverRoot(r)
		warnings = append(warnings, warns...)
		for _, c := range found {
			if _, dup := seen[c.Name]; dup && r.Namespace != "" {
				c.Name = r.Namespace + ":" + c.Name
			}
			if prev, dup := seen[c.Name]; dup {
				warnings = append(warnings, fmt.Sprintf("command /%s in %s is left out: %s has one of that name", c.Name, c.Path, prev))
				continue
			}
			if len(out) >= maxCommands {
				warnings = append(warnings, fmt.Sprintf("more than %d commands; the rest are left out", maxCommands))
				break
			}
			seen[c.Name] = c.Path
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, warnings
}

func discoverRoot(r Root) ([]Command, []string) {
	if r.Base != "" {
		if err := noLinks(r.Base, r.Dir); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, nil
			}
			return nil, []string{fmt.Sprintf("commands in %s are not loaded: %v", r.Dir, err)}
		}
	}
	fi, err := os.Stat(r.Dir)
	if err != nil {
		return nil, nil
	}
	// A root may be a single command file (a plugin's manifest can list
	// files): it is walked as a folder holding only itself.
	top := r.Dir
	if !fi.IsDir() {
		top = filepath.Dir(r.Dir)
	}
	var out []Command
	var warnings []string
	_ = filepath.WalkDir(r.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || (p == r.Dir && d.IsDir()) {
			return nil
		}
		rel, _ := filepath.Rel(top, p)
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if strings.Count(rel, string(filepath.Separator)) >= maxDepth-1 {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(strings.ToLower(d.Name()), ".md") {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 && r.Base != "" {
			warnings = append(warnings, fmt.Sprintf("command file %s is a symbolic link; not loaded", p))
			return nil
		}
		c := Command{Name: strings.TrimSuffix(d.Name(), filepath.Ext(d.Name())), Path: p, Source: r.Source,
			Base: r.Base, PluginRoot: r.PluginRoot}
		if problem := checkName(c.Name); problem != "" {
			warnings = append(warnings, fmt.Sprintf("command file %s is not loaded: %s", p, problem))
			return nil
		}
		body, f, err := c.read()
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("command file %s is not loaded: %v", p, err))
			return nil
		}
		c.Description = strings.Join(strings.Fields(f.Description), " ")
		if c.Description == "" {
			c.Description = firstLine(body)
		}
		if sub := filepath.Dir(rel); sub != "." {
			c.Description = strings.TrimSpace(c.Description + " (" + r.Source + ":" + filepath.ToSlash(sub) + ")")
		}
		c.ArgumentHint, c.AllowedTools, c.Model = strings.TrimSpace(f.ArgumentHint), f.AllowedTools, strings.TrimSpace(f.Model)
		out = append(out, c)
		return nil
	})
	return out, warnings
}

// read reads the command's file: its body and front matter. A file
// without front matter is all body.
func (c Command) read() (string, front, error) {
	var data []byte
	var err error
	if c.Base != "" {
		rel, rerr := filepath.Rel(c.Base, c.Path)
		if rerr != nil || strings.HasPrefix(rel, "..") {
			return "", front{}, fmt.Errorf("%s is outside %s", c.Path, c.Base)
		}
		data, err = safefile.ReadInTree(c.Base, rel, maxFileBytes)
	} else {
		data, err = safefile.ReadFile(c.Path, maxFileBytes)
	}
	if err != nil {
		return "", front{}, err
	}
	var f front
	res, err := frontmatter.Parse(data, &f)
	if errors.Is(err, frontmatter.ErrNoFrontMatter) {
		return res.Body, front{}, nil
	}
	if err != nil {
		return "", front{}, err
	}
	return res.Body, f, nil
}

// Expand returns the command's prompt for the arguments typed after its
// name, read from its file as it is now.
func (c Command) Expand(args string) (string, error) {
	body, _, err := c.read()
	if err != nil {
		return "", err
	}
	args = strings.TrimSpace(args)
	words := splitArgs(args)
	if c.PluginRoot != "" {
		body = strings.ReplaceAll(body, "${CLAUDE_PLUGIN_ROOT}", c.PluginRoot)
	}
	used := false
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		if body[i] != '$' {
			b.WriteByte(body[i])
			continue
		}
		rest := body[i+1:]
		if strings.HasPrefix(rest, "ARGUMENTS") {
			b.WriteString(args)
			i += len("ARGUMENTS")
			used = true
			continue
		}
		n := 0
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 0 {
			b.WriteByte('$')
			continue
		}
		k, _ := strconv.Atoi(rest[:n])
		if k >= 1 && k <= len(words) {
			b.WriteString(words[k-1])
		}
		i += n
		used = true
	}
	prompt := strings.TrimSpace(b.String())
	if !used && args != "" {
		prompt += "\n\nARGUMENTS: " + args
	}
	if prompt == "" {
		return "", fmt.Errorf("command /%s has an empty prompt", c.Name)
	}
	return prompt, nil
}

// Find returns the command named name (with or without its slash).
func Find(cmds []Command, name string) (Command, error) {
	name = strings.TrimPrefix(strings.TrimSpace(name), "/")
	for _, c := range cmds {
		if c.Name == name {
			return c, nil
		}
	}
	return Command{}, fmt.Errorf("%w: /%s", ErrNotFound, name)
}

// Split reads "/name args…" into the name and the arguments; ok is false
// if text does not start with a slash and a name.
func Split(text string) (name, args string, ok bool) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "/") || len(text) < 2 {
		return "", "", false
	}
	name, args, _ = strings.Cut(text[1:], " ")
	if i := strings.IndexAny(name, "\n\t"); i >= 0 {
		name, args = name[:i], name[i:]+" "+args
	}
	if checkName(name) != "" {
		return "", "", false
	}
	return name, strings.TrimSpace(args), true
}

// splitArgs splits arguments at blanks; double or single quotes group
// words.
func splitArgs(s string) []string {
	var out []string
	var cur strings.Builder
	quote, in := rune(0), false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '"' || r == '\''):
			quote, in = r, true
		case quote == 0 && unicode.IsSpace(r):
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// checkName returns what makes a file name unusable as a command name.
func checkName(name string) string {
	if name == "" || len(name) > 64 {
		return "a command name must have 1 to 64 characters"
	}
	for _, r := range name {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.' || r == ':') {
			return fmt.Sprintf("its name %q holds %q", name, r)
		}
	}
	return ""
}

func firstLine(body string) string {
	for _, l := range strings.Split(body, "\n") {
		t := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#"))
		if t != "" {
			if len([]rune(t)) > 100 {
				t = string([]rune(t)[:99]) + "…"
			}
			return t
		}
	}
	return ""
}

// noLinks checks that no component of dir below base is a symbolic link.
func noLinks(base, dir string) error {
	sub, err := filepath.Rel(base, dir)
	if err != nil || strings.HasPrefix(sub, "..") {
		return fmt.Errorf("%s is outside %s", dir, base)
	}
	p := base
	if sub != "." {
		for _, c := range strings.Split(sub, string(filepath.Separator)) {
			p = filepath.Join(p, c)
			fi, err := os.Lstat(p)
			if err != nil {
				return err
			}
			if fi.Mode()&fs.ModeSymlink != 0 {
				return fmt.Errorf("%s is a symbolic link", p)
			}
		}
	}
	return nil
}
