package skills

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mx-claw/mx-claw/internal/frontmatter"
)

// FileName is the name of a skill's instruction file.
const FileName = "SKILL.md"

// MaxNameLen and MaxDescriptionLen are the Agent Skills format's limits on
// a name and a description; a longer description is cut, with a warning.
const (
	MaxNameLen        = 64
	MaxDescriptionLen = 1024
)

// maxFileBytes caps a SKILL.md: 256 KiB is far more than any skill's
// instructions need and keeps a hostile file cheap.
const maxFileBytes = 256 << 10

// Skill is one skill as found on disk: what the index lists and where to
// load it from. Skills are values; the JSON form is what a session stores
// as its frozen list.
type Skill struct {
	// Name is the name the skill tool takes: the front matter's name
	// (else the folder's), "plugin:name" for a plugin's skill.
	Name string `json:"name"`
	// Description says what the skill does and when to use it.
	Description string `json:"description"`
	// AllowedTools are the tools the skill says it uses (allowed-tools),
	// as written.
	AllowedTools []string `json:"allowedTools,omitempty"`
	// Dir is the skill's folder, absolute.
	Dir string `json:"dir"`
	// Source says where the skill comes from: "user", "project" or
	// "plugin:NAME".
	Source string `json:"source"`
	// Base, if set, is the tree the skill lies in (the workspace, the
	// plugin's folder): no symbolic link between Base and the skill's
	// files is followed.
	Base string `json:"base,omitempty"`
}

// Doc is a parsed SKILL.md.
type Doc struct {
	Name         string
	Description  string
	AllowedTools []string
	License      string
	// Body is the Markdown instructions after the front matter.
	Body string
	// Warnings say what was odd but forgiven: a front matter read
	// leniently, a description cut, a name taken from the folder.
	Warnings []string
}

// front is the front matter of a SKILL.md. Unknown keys (metadata,
// compatibility, Claude Code's model or context, …) are ignored.
type front struct {
	Name         string           `yaml:"name"`
	Description  string           `yaml:"description"`
	AllowedTools frontmatter.List `yaml:"allowed-tools"`
	License      string           `yaml:"license"`
}

// Parse reads a SKILL.md. folder is the name of the folder holding it,
// the skill's name when the front matter gives none. A file without front
// matter, without a usable name, or without any description is an error
// matching ErrInvalid. A missing description is taken from the body's
// first paragraph, with a warning.
func Parse(data []byte, folder string) (Doc, error) {
	var f front
	res, err := frontmatter.Parse(data, &f)
	if err != nil {
		return Doc{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	d := Doc{Name: strings.TrimSpace(f.Name), Description: oneParagraph(f.Description),
		AllowedTools: f.AllowedTools, License: strings.TrimSpace(f.License), Body: res.Body}
	if res.Lenient {
		d.Warnings = append(d.Warnings, "its front matter is not valid YAML ("+firstLine(res.Problem)+"); read line by line")
	}
	if d.Name == "" {
		d.Name = folder
	}
	if problem := checkName(d.Name); problem != "" {
		return Doc{}, fmt.Errorf("%w: %s", ErrInvalid, problem)
	}
	if d.Description == "" {
		d.Description = firstParagraph(d.Body)
		if d.Description == "" {
			return Doc{}, fmt.Errorf("%w: no description", ErrInvalid)
		}
		d.Warnings = append(d.Warnings, "no description in its front matter; its first paragraph is used")
	}
	if utf8.RuneCountInString(d.Description) > MaxDescriptionLen {
		d.Description = cutRunes(d.Description, MaxDescriptionLen)
		d.Warnings = append(d.Warnings, fmt.Sprintf("its description is longer than %d characters; cut", MaxDescriptionLen))
	}
	return d, nil
}

// checkName returns what makes name unusable as a skill's name, or "".
// Names in the wild go beyond the Agent Skills format's lowercase and
// hyphens (capitals, underscores, dots); they load as they are. What a
// name may not hold is what would break a folder name, a tool argument or
// a line of the index: slashes, blanks, control characters, colons.
func checkName(name string) string {
	switch {
	case name == "":
		return "no name"
	case utf8.RuneCountInString(name) > MaxNameLen:
		return fmt.Sprintf("name %q is longer than %d characters", cutRunes(name, 20), MaxNameLen)
	case name == "." || name == ".." || strings.HasPrefix(name, "."):
		return fmt.Sprintf("name %q starts with a dot", name)
	}
	for _, r := range name {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.') {
			return fmt.Sprintf("name %q holds %q; use letters, digits, '-', '_' and '.'", name, r)
		}
	}
	return ""
}

// oneParagraph folds a description onto one line.
func oneParagraph(s string) string { return strings.Join(strings.Fields(s), " ") }

// firstParagraph returns the first paragraph of Markdown that is not a
// heading, folded onto one line and capped at 300 characters.
func firstParagraph(body string) string {
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case t == "" && len(lines) > 0:
			return cutRunes(strings.Join(lines, " "), 300)
		case t == "", strings.HasPrefix(t, "#"), strings.HasPrefix(t, "```"):
			continue
		}
		lines = append(lines, t)
	}
	return cutRunes(strings.Join(lines, " "), 300)
}

// cutRunes shortens s to at most n runes, the last one an ellipsis.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
