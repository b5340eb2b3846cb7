package skills

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// generated returns n skills on varied topics: each a tool or format
// ("terraform", "pdf", …) and a task ("migrate", "review", …), described
// the way real skills are.
func generated(n int) []Skill {
	subjects := []string{"terraform", "kubernetes", "pdf", "excel", "postgres", "react", "django", "rust", "docker",
		"graphql", "kafka", "redis", "android", "swift", "latex", "figma", "jira", "stripe", "oauth", "grpc"}
	tasks := []struct{ verb, desc string }{
		{"review", "Reviews %s changes for mistakes and style problems before they are merged."},
		{"migrate", "Migrates %s projects to the current major version, step by step."},
		{"debug", "Finds the cause of failing %s builds and flaky tests."},
		{"deploy", "Deploys %s services to staging and production with checks."},
		{"document", "Writes reference documentation for %s code and configuration."},
		{"optimize", "Profiles %s workloads and removes the slowest parts."},
		{"secure", "Audits %s setups for leaked secrets and unsafe defaults."},
		{"test", "Adds unit and integration tests to %s code."},
		{"scaffold", "Creates a new %s project with the team's layout and CI."},
		{"report", "Summarises %s usage and costs into a weekly report."},
	}
	var out []Skill
	for i := 0; len(out) < n; i++ {
		s, tk := subjects[i%len(subjects)], tasks[(i/len(subjects))%len(tasks)]
		out = append(out, Skill{Name: fmt.Sprintf("%s-%s", s, tk.verb), Description: fmt.Sprintf(tk.desc, s), Source: "user"})
	}
	sortSkills(out)
	return out
}

// With 200 skills the index lists 30, chosen by BM25 against the first
// message: the skills about its subject and task come first, and a skill
// left out of the index is still found by the skill tool's search.
func TestSelectBM25With200Skills(t *testing.T) {
	t.Parallel()
	cat := NewCatalog(generated(200))
	if cat.Len() != 200 {
		t.Fatalf("%d skills", cat.Len())
	}
	task := "Our Postgres migrations fail after the upgrade; please migrate the schema tooling to the new major version"
	picked := cat.Select(task, DefaultIndexSize)
	if len(picked) != DefaultIndexSize {
		t.Fatalf("%d picked, want %d", len(picked), DefaultIndexSize)
	}
	var names []string
	for _, s := range picked {
		names = append(names, s.Name)
	}
	if !slices.IsSorted(names) {
		t.Errorf("the index is not sorted by name: %v", names)
	}
	if !slices.Contains(names, "postgres-migrate") {
		t.Errorf("postgres-migrate is not in the index: %v", names)
	}
	// Every postgres skill and every migrate skill shares a word with the
	// task; all twenty of them outrank the rest.
	for _, s := range cat.Skills() {
		if (strings.HasPrefix(s.Name, "postgres-") || strings.HasSuffix(s.Name, "-migrate")) && !slices.Contains(names, s.Name) {
			t.Errorf("%s shares words with the task but is not in the index", s.Name)
		}
	}
	best := cat.Search(task, 1)
	if len(best) != 1 || best[0].Name != "postgres-migrate" {
		t.Errorf("best match %v, want postgres-migrate", best)
	}
	// A skill the index leaves out is found by searching.
	if slices.Contains(names, "figma-report") {
		t.Fatal("figma-report should not be in this index")
	}
	if found := cat.Search("weekly figma report", 3); len(found) == 0 || found[0].Name != "figma-report" {
		t.Errorf("search for figma report: %v", found)
	}
	// The selection is stable: the same task picks the same skills.
	again := cat.Select(task, DefaultIndexSize)
	if !slices.EqualFunc(picked, again, func(a, b Skill) bool { return a.Name == b.Name }) {
		t.Error("the same task picked different skills")
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	got := tokens("Fix the failing Tests in the PDF-forms skill; 修复测试")
	want := []string{"fix", "failing", "test", "pdf", "form", "修", "修复", "复", "复测", "测", "测试", "试"}
	if !slices.Equal(got, want) {
		t.Errorf("tokens = %q, want %q", got, want)
	}
	// Chinese tasks find Chinese descriptions.
	cat := NewCatalog([]Skill{{Name: "a", Description: "生成周报"}, {Name: "b", Description: "部署服务到生产环境"}})
	if r := cat.Search("帮我部署这个服务", 2); len(r) != 1 || r[0].Name != "b" {
		t.Errorf("search in Chinese: %v", r)
	}
}

func BenchmarkSelect200(b *testing.B) {
	skills := generated(200)
	for b.Loop() {
		NewCatalog(skills).Select("migrate the postgres schema", DefaultIndexSize)
	}
}
