package mxclaw_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLayering checks that imports flow only downwards (DESIGN §12): wire
// types and leaves import no other mx-claw package, tools never see the
// agent, front ends never see the agent, the store or the model's stream,
// and only the wiring imports app.
func TestLayering(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not on PATH")
	}
	const mod = "github.com/mx-claw/mx-claw/"
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], mod)
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, mod) {
				imports[pkg] = append(imports[pkg], strings.TrimPrefix(imp, mod))
			}
		}
	}
	// forbidden lists, per package prefix, the packages it must not import.
	forbidden := []struct {
		pkg     string
		allowed func(imp string) bool
	}{
		{"internal/protocol", none},
		{"internal/sse", none},
		{"internal/patch", none},
		{"internal/ignore", safefileOnly},
		{"internal/safefile", none},
		{"internal/llm", func(imp string) bool { return strings.HasPrefix(imp, "internal/llm") || imp == "internal/sse" }},
		{"internal/tools", func(imp string) bool {
			return strings.HasPrefix(imp, "internal/tools") || oneOf(imp, "internal/protocol", "internal/patch", "internal/execx", "internal/ignore", "internal/sandbox", "internal/webfetch", "internal/images", "internal/websearch")
		}},
		{"internal/execx", func(imp string) bool { return imp == "internal/sandbox" }},
		{"internal/sandbox", none},
		// The store's implementations and its conformance suite see the
		// store interface and one another, nothing else.
		{"internal/store", func(imp string) bool { return imp == "internal/protocol" || strings.HasPrefix(imp, "internal/store") }},
		{"internal/config", func(imp string) bool { return oneOf(imp, "internal/protocol", "internal/safefile") }},
		{"internal/headless", func(imp string) bool { return oneOf(imp, "internal/protocol", "internal/config", "internal/termsafe") }},
		{"internal/termsafe", none},
		{"internal/webfetch", none},
		{"internal/websearch", none},
		{"internal/images", func(imp string) bool { return imp == "internal/protocol" }},
		{"internal/permission", safefileOnly},
		{"internal/secret", safefileOnly},
		{"internal/memory", safefileOnly},
		{"internal/subagent", func(imp string) bool { return oneOf(imp, "internal/safefile", "internal/frontmatter") }},
		{"internal/worktree", func(imp string) bool {
			return strings.HasPrefix(imp, "internal/tools") || oneOf(imp, "internal/protocol", "internal/patch", "internal/execx", "internal/ignore", "internal/sandbox", "internal/safefile")
		}},
		{"internal/frontmatter", none},
		{"internal/skills", func(imp string) bool {
			return oneOf(imp, "internal/safefile", "internal/frontmatter", "internal/tools")
		}},
		{"internal/slashcmd", func(imp string) bool { return oneOf(imp, "internal/safefile", "internal/frontmatter") }},
		{"internal/plugins", safefileOnly},
		{"internal/mdterm", none},
		{"internal/testutil", none},
		{"internal/server/web", none},
		{"internal/compact", func(imp string) bool { return imp == "internal/protocol" }},
		{"internal/checkpoint", func(imp string) bool { return oneOf(imp, "internal/protocol", "internal/ignore") }},
		{"internal/sessionio", func(imp string) bool { return imp == "internal/protocol" }},
		{"internal/catalog", func(imp string) bool { return imp == "internal/protocol" }},
		{"internal/modelcmd", func(imp string) bool { return oneOf(imp, "internal/config", "internal/secret") }},
		{"internal/hooks", func(imp string) bool {
			return oneOf(imp, "internal/permission", "internal/execx", "internal/protocol", "internal/patch")
		}},
		{"internal/mcpserve", func(imp string) bool { return imp == "internal/protocol" }},
		{"internal/mcp", func(imp string) bool {
			return oneOf(imp, "internal/tools", "internal/execx", "internal/safefile")
		}},
		{"internal/agent", func(imp string) bool {
			return !oneOf(imp, "internal/app", "internal/cli", "internal/headless", "internal/tui")
		}},
		{"internal/bus", none},
		{"internal/server", func(imp string) bool {
			return strings.HasPrefix(imp, "internal/server/") || oneOf(imp, "internal/app", "internal/agent", "internal/bus",
				"internal/config", "internal/permission", "internal/protocol", "internal/secret", "internal/sse", "internal/store")
		}},
		{"internal/jsonrpc", none},
		{"internal/lsp", func(imp string) bool { return oneOf(imp, "internal/tools", "internal/execx") }},
		// The stdio front doors translate; the core is reached through
		// app.Driver only.
		{"internal/acp", func(imp string) bool { return oneOf(imp, "internal/app", "internal/protocol", "internal/jsonrpc") }},
		{"internal/appserver", func(imp string) bool { return oneOf(imp, "internal/app", "internal/protocol", "internal/jsonrpc") }},
		{"internal/tui", func(imp string) bool {
			return oneOf(imp, "internal/protocol", "internal/config", "internal/termsafe", "internal/modelcmd", "internal/mdterm", "internal/safefile", "internal/patch")
		}},
	}
	for pkg, imps := range imports {
		for _, rule := range forbidden {
			if pkg != rule.pkg && !strings.HasPrefix(pkg, rule.pkg+"/") {
				continue
			}
			if rule.pkg == "internal/llm" && strings.HasPrefix(pkg, "internal/llm/llmtest") {
				continue
			}
			for _, imp := range imps {
				if !rule.allowed(imp) {
					t.Errorf("%s imports %s, against the layering of DESIGN §12", pkg, imp)
				}
			}
		}
		for _, imp := range imps {
			if imp == "internal/store/postgres" && pkg != "internal/app" {
				t.Errorf("%s imports internal/store/postgres; only app opens the store", pkg)
			}
			if imp == "internal/app" && !oneOf(pkg, "internal/cli", "internal/server", "internal/acp", "internal/appserver") {
				t.Errorf("%s imports internal/app; only the wiring (cli) and the front doors (server, acp, appserver) may", pkg)
			}
		}
	}
}

func none(string) bool { return false }

// safefileOnly allows only internal/safefile, the leaf every package that
// reads its own files uses.
func safefileOnly(imp string) bool { return imp == "internal/safefile" }

func oneOf(s string, set ...string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}
