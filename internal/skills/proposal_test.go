package skills

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseProposal(t *testing.T) {
	t.Parallel()
	name, md, err := ParseProposal("```markdown\n---\nname: Release Go Module\ndescription: Tags and publishes a Go module release.\n---\n\n1. Run the tests.\n2. Tag.\n```")
	if err != nil {
		t.Fatal(err)
	}
	if name != "release-go-module" {
		t.Errorf("name %q", name)
	}
	doc, err := Parse(md, name)
	if err != nil || doc.Name != name || doc.Description != "Tags and publishes a Go module release." || !strings.Contains(doc.Body, "2. Tag.") {
		t.Errorf("kept SKILL.md does not parse back: %v %+v\n%s", err, doc, md)
	}
	for _, declined := range []string{"NONE", "none.", "", "Sure! Here is a skill.", "---\nname: x\ndescription: y\n---\n"} {
		if _, _, err := ParseProposal(declined); !errors.Is(err, ErrNoProposal) {
			t.Errorf("%q: err %v, want ErrNoProposal", declined, err)
		}
	}
}

func TestStoreProposeAcceptReject(t *testing.T) {
	t.Parallel()
	st := Store{Dir: filepath.Join(t.TempDir(), "skills")}
	tr := Trajectory{SessionID: "s1", TurnID: "t1", Workspace: "/w", Model: "fake/m", Request: "release it",
		Steps: []Step{{Tool: "run_command", Arguments: `{"command":"go test ./..."}`, OK: true}}, Answer: "done",
		CreatedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	_, md, err := ParseProposal("---\nname: release\ndescription: Releases.\n---\nSteps.\n")
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.Propose(tr, "release", md)
	if err != nil {
		t.Fatal(err)
	}
	if p.Dir != filepath.Join(st.Proposed(), "release") || p.Provenance.SessionID != "s1" || p.Provenance.Steps != 1 {
		t.Errorf("proposal %+v", p)
	}
	for _, f := range []string{"SKILL.md", ".proposal/proposal.json", ".proposal/trajectory.json"} {
		if _, err := os.Stat(filepath.Join(p.Dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	// Proposals are never loaded as skills.
	if found, _ := Discover([]Root{{Dir: st.Active(), Source: "user"}}); len(found) != 0 {
		t.Errorf("a proposal loads as a skill: %+v", found)
	}
	if _, err := st.Propose(tr, "release", md); !errors.Is(err, ErrExists) {
		t.Errorf("a second proposal of the same name: %v", err)
	}
	list, warnings := st.Proposals()
	if len(list) != 1 || list[0].Name != "release" || list[0].Provenance.Request != "release it" || len(warnings) > 0 {
		t.Errorf("proposals %+v %v", list, warnings)
	}
	sk, err := st.Accept("release")
	if err != nil {
		t.Fatal(err)
	}
	found, _ := Discover([]Root{{Dir: st.Active(), Source: "user"}})
	if len(found) != 1 || found[0].Name != "release" || found[0].Dir != sk.Dir {
		t.Fatalf("accepted skill not active: %+v", found)
	}
	if files, _, _ := found[0].Files(); len(files) != 0 {
		t.Errorf("the provenance is listed among the skill's files: %+v", files)
	}
	if _, err := st.Accept("release"); !errors.Is(err, ErrNotFound) {
		t.Errorf("accepting twice: %v", err)
	}
	if _, err := st.Propose(tr, "release", md); !errors.Is(err, ErrExists) {
		t.Errorf("a proposal covered by an active skill: %v", err)
	}
	_, md2, _ := ParseProposal("---\nname: other\ndescription: Other.\n---\nSteps.\n")
	if _, err := st.Propose(tr, "other", md2); err != nil {
		t.Fatal(err)
	}
	if err := st.Reject("other"); err != nil {
		t.Fatal(err)
	}
	if list, _ := st.Proposals(); len(list) != 0 {
		t.Errorf("rejected proposal still listed: %+v", list)
	}
	if err := st.Reject("../active/release"); !errors.Is(err, ErrNotFound) {
		t.Errorf("reject with a path: %v", err)
	}
}

func TestProposalPromptCapsTheTrajectory(t *testing.T) {
	t.Parallel()
	tr := Trajectory{Request: strings.Repeat("x", 10000), Answer: "ok"}
	for i := 0; i < 60; i++ {
		tr.Steps = append(tr.Steps, Step{Tool: "read_file", Arguments: strings.Repeat("a", 5000), OK: i != 3, Result: strings.Repeat("r", 5000)})
	}
	sys, user := ProposalPrompt(tr)
	if !strings.Contains(sys, "NONE") || len(user) > 60000 || !strings.Contains(user, "… and 20 more calls") || !strings.Contains(user, "4. read_file") || !strings.Contains(user, "→ failed") {
		t.Errorf("prompt of %d bytes:\n%.600s", len(user), user)
	}
}
