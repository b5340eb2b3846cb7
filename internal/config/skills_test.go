package config

import (
	"os"
	"path/filepath"
	"testing"
)

// The skills settings load and survive a Save (which writes only the
// fields it knows).
func TestSkillsSettingsRoundTrip(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, FileName), []byte(`{"version":1,"skills":{"proposals":false,"minProposalCalls":6,"indexSize":10}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(home)
	if err != nil {
		t.Fatal(err)
	}
	if c.Skills.ProposalsOn() || c.Skills.MinProposalCalls != 6 || c.Skills.IndexSize != 10 {
		t.Fatalf("skills %+v", c.Skills)
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	again, err := Load(home)
	if err != nil || again.Skills.ProposalsOn() || again.Skills.IndexSize != 10 {
		t.Errorf("after save: %+v, %v", again.Skills, err)
	}
	if (Skills{}).ProposalsOn() != true {
		t.Error("proposals are not on by default")
	}
	if err := os.WriteFile(filepath.Join(home, FileName), []byte(`{"version":1,"skills":{"indexSize":-1}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(home); err == nil {
		t.Error("a negative index size loads")
	}
}
