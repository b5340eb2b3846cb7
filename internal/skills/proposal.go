package skills

import (
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/mx-claw/mx-claw/internal/frontmatter"
	"github.com/mx-claw/mx-claw/internal/safefile"
)

// Learning from trajectories. After a turn that succeeded through several
// tool steps, the agent shows the trajectory to the model and asks for a
// SKILL.md (ProposalPrompt). The answer is kept under skills/proposed/
// with where it came from (Store.Propose) and is never loaded: a person
// reads it and accepts it (it moves to skills/active/) or rejects it.

//go:embed prompts/propose.md
var proposeInstructions string

// Folders under the home's skills/ folder (DESIGN §9).
const (
	ActiveDir   = "active"
	ProposedDir = "proposed"
	// provenanceDir, inside a proposed skill's folder, holds where it
	// came from; hidden, so it is not listed as one of the skill's files.
	provenanceDir = ".proposal"
)

// Trajectory is a finished turn as a proposal is learned from.
type Trajectory struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	Workspace string `json:"workspace"`
	Model     string `json:"model"`
	// Request is the user's message that started the turn.
	Request string `json:"request"`
	Steps   []Step `json:"steps"`
	// Answer is the model's final answer.
	Answer    string    `json:"answer"`
	CreatedAt time.Time `json:"createdAt"`
}

// Step is one tool call of a trajectory.
type Step struct {
	Tool      string `json:"tool"`
	Arguments string `json:"arguments"`
	OK        bool   `json:"ok"`
	// Result is the beginning of the call's result.
	Result string `json:"result,omitempty"`
}

// Provenance says where a proposal came from; it is kept beside it.
type Provenance struct {
	SessionID string    `json:"sessionId"`
	TurnID    string    `json:"turnId"`
	Workspace string    `json:"workspace"`
	Model     string    `json:"model"`
	Request   string    `json:"request"`
	Steps     int       `json:"steps"`
	CreatedAt time.Time `json:"createdAt"`
}

// Proposal is a proposed skill.
type Proposal struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Dir         string     `json:"dir"`
	Provenance  Provenance `json:"provenance"`
}

// Limits of what a proposal request shows of a trajectory.
const (
	maxStepArgs   = 600
	maxStepResult = 400
	maxRequest    = 2000
	maxAnswer     = 1500
	maxSteps      = 40
)

// ProposalPrompt returns the system and user messages that ask a model to
// write a skill for tr.
func ProposalPrompt(tr Trajectory) (system, user string) {
	var b strings.Builder
	b.WriteString("The user asked:\n<request>\n")
	b.WriteString(clip(tr.Request, maxRequest))
	b.WriteString("\n</request>\n\nThe agent's tool calls, in order:\n")
	for i, s := range tr.Steps {
		if i == maxSteps {
			fmt.Fprintf(&b, "… and %d more calls\n", len(tr.Steps)-maxSteps)
			break
		}
		status := "ok"
		if !s.OK {
			status = "failed"
		}
		fmt.Fprintf(&b, "%d. %s %s → %s", i+1, s.Tool, clip(s.Arguments, maxStepArgs), status)
		if r := strings.TrimSpace(s.Result); r != "" {
			fmt.Fprintf(&b, ": %s", clip(strings.Join(strings.Fields(r), " "), maxStepResult))
		}
		b.WriteString("\n")
	}
	b.WriteString("\nIts final answer:\n<answer>\n")
	b.WriteString(clip(tr.Answer, maxAnswer))
	b.WriteString("\n</answer>")
	return strings.TrimSpace(proposeInstructions), b.String()
}

// clip keeps the beginning of s, at most n bytes on a rune boundary.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// ErrNoProposal is returned by ParseProposal when the model declined
// (NONE) or wrote nothing usable.
var ErrNoProposal = errors.New("no skill proposed")

// ParseProposal reads a model's answer to ProposalPrompt and returns the
// SKILL.md to keep, with its name made a folder name of lowercase
// letters, digits and hyphens. A fence around the file is removed.
func ParseProposal(answer string) (name string, skillMD []byte, err error) {
	text := strings.TrimSpace(answer)
	if strings.HasPrefix(text, "```") {
		_, rest, _ := strings.Cut(text, "\n")
		text = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "```"))
	}
	if text == "" || strings.EqualFold(strings.Trim(text, ". "), "none") {
		return "", nil, ErrNoProposal
	}
	var f front
	res, err := frontmatter.Parse([]byte(text), &f)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %v", ErrNoProposal, err)
	}
	name = Slug(f.Name)
	desc := oneParagraph(f.Description)
	body := strings.TrimSpace(res.Body)
	switch {
	case name == "":
		return "", nil, fmt.Errorf("%w: its name %q has no letters or digits", ErrNoProposal, f.Name)
	case desc == "":
		return "", nil, fmt.Errorf("%w: it has no description", ErrNoProposal)
	case body == "":
		return "", nil, fmt.Errorf("%w: it has no instructions", ErrNoProposal)
	}
	doc := Doc{Description: cutRunes(desc, MaxDescriptionLen), AllowedTools: f.AllowedTools, Body: body}
	head, err := yaml.Marshal(struct {
		Name         string   `yaml:"name"`
		Description  string   `yaml:"description"`
		AllowedTools []string `yaml:"allowed-tools,omitempty"`
	}{name, doc.Description, doc.AllowedTools})
	if err != nil {
		return "", nil, err
	}
	return name, []byte("---\n" + string(head) + "---\n\n" + doc.Body + "\n"), nil
}

// Slug makes s a skill folder name: lowercase ASCII letters and digits,
// words joined by single hyphens, at most MaxNameLen long.
func Slug(s string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			hyphen = false
			b.WriteRune(r)
		default:
			hyphen = true
		}
	}
	out := b.String()
	if len(out) > MaxNameLen {
		out = strings.TrimRight(out[:MaxNameLen], "-")
	}
	return out
}

// Store is the user's skill folders: $MX_CLAW_HOME/skills/active and
// skills/proposed.
type Store struct {
	// Dir is $MX_CLAW_HOME/skills.
	Dir string
}

// Active returns the folder of the user's skills.
func (s Store) Active() string { return filepath.Join(s.Dir, ActiveDir) }

// Proposed returns the folder of proposals.
func (s Store) Proposed() string { return filepath.Join(s.Dir, ProposedDir) }

// Exists reports whether an active skill or a proposal has the name.
func (s Store) Exists(name string) bool {
	for _, d := range []string{s.Active(), s.Proposed()} {
		if _, err := os.Lstat(filepath.Join(d, name)); err == nil {
			return true
		}
	}
	return false
}

// Propose keeps a proposed skill learned from tr: its SKILL.md, and in a
// hidden folder beside it where it came from and the whole trajectory.
// The folder appears at once, complete (it is written aside and renamed).
// A name an active skill or another proposal already has is an error
// matching ErrExists: that procedure is covered.
func (s Store) Propose(tr Trajectory, name string, skillMD []byte) (Proposal, error) {
	if problem := checkName(name); problem != "" {
		return Proposal{}, fmt.Errorf("%w: %s", ErrInvalid, problem)
	}
	doc, err := Parse(skillMD, name)
	if err != nil {
		return Proposal{}, err
	}
	if s.Exists(name) {
		return Proposal{}, fmt.Errorf("%w: %s", ErrExists, name)
	}
	if err := os.MkdirAll(s.Proposed(), 0o700); err != nil {
		return Proposal{}, err
	}
	tmp, err := os.MkdirTemp(s.Proposed(), ".new-")
	if err != nil {
		return Proposal{}, err
	}
	defer os.RemoveAll(tmp)
	prov := Provenance{SessionID: tr.SessionID, TurnID: tr.TurnID, Workspace: tr.Workspace, Model: tr.Model,
		Request: clip(tr.Request, maxRequest), Steps: len(tr.Steps), CreatedAt: tr.CreatedAt.UTC()}
	provJSON, _ := json.MarshalIndent(prov, "", "  ")
	trJSON, _ := json.MarshalIndent(tr, "", "  ")
	if err := os.Mkdir(filepath.Join(tmp, provenanceDir), 0o700); err != nil {
		return Proposal{}, err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{
		{FileName, skillMD},
		{filepath.Join(provenanceDir, "proposal.json"), append(provJSON, '\n')},
		{filepath.Join(provenanceDir, "trajectory.json"), append(trJSON, '\n')},
	} {
		if err := os.WriteFile(filepath.Join(tmp, f.name), f.data, 0o600); err != nil {
			return Proposal{}, err
		}
	}
	dir := filepath.Join(s.Proposed(), name)
	if err := os.Rename(tmp, dir); err != nil {
		if s.Exists(name) {
			return Proposal{}, fmt.Errorf("%w: %s", ErrExists, name)
		}
		return Proposal{}, err
	}
	return Proposal{Name: name, Description: doc.Description, Dir: dir, Provenance: prov}, nil
}

// Proposals returns the proposals waiting for a person, oldest first, and
// warnings for folders that cannot be read.
func (s Store) Proposals() ([]Proposal, []string) {
	entries, err := os.ReadDir(s.Proposed())
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, []string{err.Error()}
	}
	var out []Proposal
	var warnings []string
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p, err := s.proposal(e.Name())
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("proposal %s: %v", e.Name(), err))
			continue
		}
		out = append(out, p)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Provenance.CreatedAt.Before(out[j].Provenance.CreatedAt) })
	return out, warnings
}

// proposal reads one proposal.
func (s Store) proposal(name string) (Proposal, error) {
	if problem := checkName(name); problem != "" {
		return Proposal{}, fmt.Errorf("%w: %s", ErrNotFound, problem)
	}
	dir := filepath.Join(s.Proposed(), name)
	sk := Skill{Dir: dir, Source: "proposed"}
	doc, err := sk.load()
	if errors.Is(err, fs.ErrNotExist) {
		return Proposal{}, fmt.Errorf("%w: no proposal %s", ErrNotFound, name)
	}
	if err != nil {
		return Proposal{}, err
	}
	p := Proposal{Name: name, Description: doc.Description, Dir: dir}
	if data, err := safefile.ReadInTree(dir, filepath.Join(provenanceDir, "proposal.json"), 1<<20); err == nil {
		_ = json.Unmarshal(data, &p.Provenance)
	}
	return p, nil
}

// Proposal returns the proposal of that name, or an error matching
// ErrNotFound.
func (s Store) Proposal(name string) (Proposal, error) { return s.proposal(name) }

// Accept makes a proposal an active skill: its folder moves to
// skills/active/ (its provenance goes with it, hidden). Its SKILL.md must
// still be valid, since a person may have edited it; an active skill of
// that name is an error matching ErrExists.
func (s Store) Accept(name string) (Skill, error) {
	p, err := s.proposal(name)
	if err != nil {
		return Skill{}, err
	}
	dst := filepath.Join(s.Active(), name)
	if _, err := os.Lstat(dst); err == nil {
		return Skill{}, fmt.Errorf("%w: %s (reject the proposal or remove %s first)", ErrExists, name, dst)
	}
	if err := os.MkdirAll(s.Active(), 0o700); err != nil {
		return Skill{}, err
	}
	if err := os.Rename(p.Dir, dst); err != nil {
		return Skill{}, fmt.Errorf("accept %s: %w", name, err)
	}
	return Skill{Name: name, Description: p.Description, Dir: dst, Source: "user"}, nil
}

// Reject removes a proposal.
func (s Store) Reject(name string) error {
	p, err := s.proposal(name)
	if err != nil {
		return err
	}
	// Renamed aside first, so the proposal is gone at once even if the
	// removal stops half way.
	aside := filepath.Join(s.Proposed(), ".rejected-"+name+"-"+randomHex())
	if err := os.Rename(p.Dir, aside); err != nil {
		return fmt.Errorf("reject %s: %w", name, err)
	}
	return os.RemoveAll(aside)
}

func randomHex() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
