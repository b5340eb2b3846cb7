package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/memory"
)

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The REPL's /context, /memory and /skills on a real App: a new session's
// report shows the memory and skills parts a first message would freeze.
func TestBackendExtras(t *testing.T) {
	t.Parallel()
	home, ws := t.TempDir(), t.TempDir()
	writeTree(t, home, map[string]string{
		"memory/USER.md":                   "- I use tabs.\n",
		"skills/active/pdf-forms/SKILL.md": "---\nname: pdf-forms\ndescription: Fills in PDF forms.\n---\nBody.\n",
	})
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Open(context.Background(), home, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx := context.Background()
	s, err := a.Core.CreateSession(ctx, ws, "openai/gpt-4.1", nil)
	if err != nil {
		t.Fatal(err)
	}
	b := NewBackend(a, ws, "")
	report, err := b.ContextReport(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	tools := fmt.Sprintf("tools (%d)", len(a.tools.Tools())+1) // the task tool is added per session
	for _, want := range []string{"would freeze now", "instructions", "environment", "memory", "skills", tools, "conversation", "of 1047576"} {
		if !strings.Contains(report, want) {
			t.Errorf("/context lacks %q:\n%s", want, report)
		}
	}
	out, err := b.SkillsCommand(ctx, s.ID, nil)
	if err != nil || !strings.Contains(out, "pdf-forms  Fills in PDF forms.") {
		t.Errorf("/skills: %q, %v", out, err)
	}
	if _, err := a.MemoryCandidates().Add(memory.Candidate{File: memory.UserFile, Text: "I like Go."}); err != nil {
		t.Fatal(err)
	}
	out, _ = b.MemoryCommand(ctx, nil)
	if !strings.Contains(out, "→ USER.md  I like Go.") {
		t.Errorf("/memory: %q", out)
	}
	id := strings.Fields(strings.Split(out, "\n")[1])[0]
	if out, err := b.MemoryCommand(ctx, []string{"accept", id}); err != nil || !strings.Contains(out, "USER.md") {
		t.Errorf("/memory accept: %q %v", out, err)
	}
	if data, _ := os.ReadFile(filepath.Join(home, "memory", "USER.md")); string(data) != "- I use tabs.\n- I like Go.\n" {
		t.Errorf("USER.md %q", data)
	}
	if _, err := b.MemoryCommand(ctx, []string{"accept"}); err == nil {
		t.Error("/memory accept without an id")
	}
}

func TestSplitPrompt(t *testing.T) {
	t.Parallel()
	p := "Instr.\n# Environment\n<environment>\nenv\n</environment>\n\n# Memory\n<memory>\nm\n</memory>\n\n# Skills\nSkills are…\n"
	parts := splitPrompt(p)
	var names []string
	joined := ""
	for _, pt := range parts {
		names = append(names, pt.name)
		joined += pt.text
	}
	if strings.Join(names, ",") != "instructions,environment,memory,skills" || joined != p {
		t.Errorf("parts %v; joined back equal: %v", names, joined == p)
	}
}

// twoHundredSkills installs 200 skills with varied subjects and tasks.
func twoHundredSkills(t testing.TB, home string) {
	subjects := []string{"terraform", "kubernetes", "pdf", "excel", "postgres", "react", "django", "rust", "docker",
		"graphql", "kafka", "redis", "android", "swift", "latex", "figma", "jira", "stripe", "oauth", "grpc"}
	tasks := []string{"review", "migrate", "debug", "deploy", "document", "optimize", "secure", "test", "scaffold", "report"}
	for i := 0; i < 200; i++ {
		s, k := subjects[i%20], tasks[i/20]
		name := s + "-" + k
		p := filepath.Join(home, "skills", "active", name, "SKILL.md")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		body := "---\nname: " + name + "\ndescription: Helps " + k + " " + s + " projects: the steps, the commands and the checks the team uses.\n---\n\nSteps.\n"
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// With 200 skills a new session's index lists the 30 that best match its
// first message, and says how many more the skill tool can search; the
// prompt grows by a few KiB, not by all 200.
func TestSessionContextWith200Skills(t *testing.T) {
	t.Parallel()
	home, ws := t.TempDir(), t.TempDir()
	twoHundredSkills(t, home)
	cfg, _ := config.Load(home)
	a := &App{Home: home, Config: cfg}
	sc := a.contextFor(ws, false, "please migrate our postgres schema")
	if len(sc.Skills) != 30 || sc.MoreSkills != 170 || len(sc.Frozen.Skills) != 200 {
		t.Fatalf("listed %d, more %d, frozen %d", len(sc.Skills), sc.MoreSkills, len(sc.Frozen.Skills))
	}
	found := false
	for _, s := range sc.Skills {
		found = found || s.Name == "postgres-migrate"
	}
	if !found {
		t.Error("postgres-migrate is not in the index")
	}
	memory, skills := sc.Sections()
	t.Logf("skill index of 30 of 200 skills: %d bytes (~%d tokens); memory %d bytes", len(skills), len(skills)/4, len(memory))
	if len(skills) > 6*1024 {
		t.Errorf("the index is %d bytes", len(skills))
	}
}

func BenchmarkSessionContext200Skills(b *testing.B) {
	home := b.TempDir()
	twoHundredSkills(b, home)
	cfg, _ := config.Load(home)
	a := &App{Home: home, Config: cfg}
	for b.Loop() {
		a.contextFor(home, false, "please migrate our postgres schema")
	}
}
