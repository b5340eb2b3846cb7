package mxclaw_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The layering of DESIGN §12, checked on the packages' real imports, and
// on what they reach transitively (in the manner of tailscale's deptest):
// a rule names the packages it covers, what they must not import or
// reach, and why. The rules are data; checkLayering applies them to an
// import graph, so TestLayeringCatchesAForbiddenImport can show each kind
// failing on a deliberately broken copy of the real graph.

const mod = "github.com/mx-claw/mx-claw/"

// pkgNode is one package of the import graph (module packages without
// the module prefix).
type pkgNode struct {
	std     bool
	imports []string
}

// graph is the import graph of the module's packages and everything they
// reach (go list -deps), without test files.
type graph map[string]*pkgNode

// goList runs go list once for both tests.
var goList = sync.OnceValues(func() ([]byte, error) {
	return exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}	{{.Standard}}	{{join .Imports " "}}`, "./...").Output()
})

// loadGraph reads the import graph of ./... from go list.
func loadGraph(t *testing.T) graph {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not on PATH")
	}
	out, err := goList()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	g := graph{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		n := &pkgNode{std: f[1] == "true"}
		for _, imp := range strings.Fields(f[2]) {
			n.imports = append(n.imports, strings.TrimPrefix(imp, mod))
		}
		g[strings.TrimPrefix(f[0], mod)] = n
	}
	return g
}

// reach returns every package pkg reaches through imports, with the path
// to each (pkg → … → dep), breadth first so paths are shortest.
func (g graph) reach(pkg string) map[string][]string {
	paths := map[string][]string{pkg: {pkg}}
	queue := []string{pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		n := g[p]
		if n == nil {
			continue
		}
		for _, imp := range n.imports {
			if _, seen := paths[imp]; !seen {
				paths[imp] = append(append([]string(nil), paths[p]...), imp)
				queue = append(queue, imp)
			}
		}
	}
	delete(paths, pkg)
	return paths
}

// ours reports whether pkg is a package of this module.
func (g graph) ours(pkg string) bool {
	n := g[pkg]
	return n != nil && !n.std && !strings.Contains(strings.SplitN(pkg, "/", 2)[0], ".")
}

// depRule is one rule of the layering.
type depRule struct {
	// covers reports whether the rule applies to a package of the module.
	covers func(pkg string) bool
	// direct limits the rule to direct imports; otherwise it applies to
	// everything the package reaches.
	direct bool
	// forbids reports whether the package may not import (or reach) dep.
	forbids func(g graph, dep string) bool
	// why is the reason, printed with a violation.
	why string
}

// under reports whether pkg is one of pkgs or inside one of them.
func under(pkg string, pkgs ...string) bool {
	for _, p := range pkgs {
		if pkg == p || strings.HasPrefix(pkg, p+"/") {
			return true
		}
	}
	return false
}

func in(pkgs ...string) func(string) bool {
	return func(pkg string) bool { return under(pkg, pkgs...) }
}

// onlyMay forbids every package of the module but the listed ones.
func onlyMay(allowed ...string) func(graph, string) bool {
	return func(g graph, dep string) bool { return g.ours(dep) && !oneOf(dep, allowed...) }
}

// uiModules are the terminal UI libraries: only the front ends link them.
var uiModules = []string{"charm.land/", "github.com/charmbracelet/", "github.com/alecthomas/chroma/", "github.com/muesli/"}

// testKits are the fakes and fixtures of the tests.
var testKits = []string{"internal/llm/llmtest", "internal/testutil"}

// rules is the layering.
var rules = []depRule{
	// What every binary and client shares stays free of third-party code.
	{covers: in("internal/protocol", "internal/llm", "internal/headless"),
		forbids: func(g graph, dep string) bool { return !g[dep].std && !g.ours(dep) },
		why: "protocol is the wire format every front end, client and the store share, llm the provider adapter " +
			"and headless the printer of `mx-claw run`: they reach nothing outside the standard library (and this module), " +
			"so no module can change what they send or print"},
	// The core runs headless (server, ACP, CI).
	{covers: in("internal/agent", "internal/store", "internal/llm"),
		forbids: func(_ graph, dep string) bool {
			for _, m := range uiModules {
				if strings.HasPrefix(dep, m) {
					return true
				}
			}
			return false
		},
		why: "the core (agent, store, model client) runs without a terminal in the server, ACP and CI; " +
			"the UI libraries (Bubble Tea, Lip Gloss, Glamour, Chroma) belong to the front ends"},
	{covers: func(pkg string) bool { return pkg != "cmd/mx-claw" }, direct: true,
		forbids: func(_ graph, dep string) bool { return dep == "internal/cli" },
		why:     "cli is the binary's command tree and imports every front end; only cmd/mx-claw's main imports it"},
	{covers: func(pkg string) bool { return pkg != "cmd/fakellm" && !under(pkg, testKits...) },
		forbids: func(_ graph, dep string) bool { return under(dep, testKits...) },
		why: "the fake model and the test fixtures never ship: only tests and cmd/fakellm import them, " +
			"so no production path can reach a scripted provider"},

	// DESIGN §12: imports flow downwards. Leaves import no other mx-claw
	// package (or only safefile, the leaf every package that reads its
	// own files uses).
	{covers: in("internal/protocol", "internal/sse", "internal/patch", "internal/safefile", "internal/sandbox",
		"internal/termsafe", "internal/mdterm", "internal/testutil", "internal/server/web", "internal/bus", "internal/jsonrpc"),
		direct: true, forbids: onlyMay(), why: "a leaf: any package may import it, so it imports none of ours"},
	{covers: in("internal/ignore", "internal/permission", "internal/secret", "internal/memory", "internal/plugins"), direct: true,
		forbids: onlyMay("internal/safefile"), why: "a leaf that reads files through safefile only"},
	{covers: in("internal/frontmatter", "internal/webfetch", "internal/websearch"), direct: true, forbids: onlyMay(),
		why: "a leaf: any package may import it, so it imports none of ours"},
	{covers: in("internal/images"), direct: true, forbids: onlyMay("internal/protocol"), why: "it speaks only the wire types"},
	{covers: in("internal/skills"), direct: true, forbids: onlyMay("internal/safefile", "internal/frontmatter", "internal/tools"),
		why: "skills are found and read from files, and offered as a tool"},
	{covers: in("internal/slashcmd"), direct: true, forbids: onlyMay("internal/safefile", "internal/frontmatter"),
		why: "slash commands are read from files"},
	{covers: in("internal/subagent"), direct: true, forbids: onlyMay("internal/safefile", "internal/frontmatter"),
		why: "subagent definitions are read from files"},
	{covers: in("internal/worktree"), direct: true,
		forbids: func(g graph, dep string) bool {
			return g.ours(dep) && !under(dep, "internal/tools") && !oneOf(dep, "internal/protocol", "internal/patch",
				"internal/execx", "internal/ignore", "internal/sandbox", "internal/safefile")
		},
		why: "worktree delegation works with the tools' workspace and commands, below the agent"},
	{covers: in("internal/checkpoint"), direct: true, forbids: onlyMay("internal/protocol", "internal/ignore"),
		why: "checkpoints snapshot files; the store is reached through an interface"},
	{covers: in("internal/lsp"), direct: true, forbids: onlyMay("internal/tools", "internal/execx"),
		why: "the language servers run as commands and report through a tool"},
	{covers: func(pkg string) bool { return under(pkg, "internal/llm") && !under(pkg, "internal/llm/llmtest") }, direct: true,
		forbids: func(g graph, dep string) bool { return g.ours(dep) && !under(dep, "internal/llm", "internal/sse") },
		why:     "the model client knows only its own packages and the SSE reader"},
	{covers: in("internal/tools"), direct: true,
		forbids: func(g graph, dep string) bool {
			return g.ours(dep) && !under(dep, "internal/tools") && !oneOf(dep, "internal/protocol", "internal/patch",
				"internal/execx", "internal/ignore", "internal/sandbox", "internal/webfetch", "internal/images", "internal/websearch")
		},
		why: "tools never see the agent, the store or a front end; they get what they need in their Env"},
	{covers: in("internal/execx"), direct: true, forbids: onlyMay("internal/sandbox"), why: "commands run through the sandbox and nothing else"},
	{covers: in("internal/store", "internal/compact", "internal/catalog", "internal/mcpserve", "internal/sessionio"), direct: true,
		forbids: onlyMay("internal/protocol"), why: "it speaks only the wire types"},
	{covers: in("internal/config"), direct: true, forbids: onlyMay("internal/protocol", "internal/safefile"),
		why: "configuration is read by everyone and reads only files"},
	{covers: in("internal/headless"), direct: true, forbids: onlyMay("internal/protocol", "internal/config", "internal/termsafe"),
		why: "a front end renders events; it never sees the agent, the store or the model's stream"},
	{covers: in("internal/modelcmd"), direct: true, forbids: onlyMay("internal/config", "internal/secret"),
		why: "the /model commands change configuration and keys only"},
	{covers: in("internal/hooks"), direct: true,
		forbids: onlyMay("internal/permission", "internal/execx", "internal/protocol", "internal/patch"),
		why:     "hooks are an engine of their own, independent of the agent"},
	{covers: in("internal/mcp"), direct: true, forbids: onlyMay("internal/tools", "internal/execx", "internal/safefile"),
		why: "MCP tools are tools; the agent runs them like any other"},
	{covers: in("internal/agent"), direct: true,
		forbids: func(_ graph, dep string) bool {
			return oneOf(dep, "internal/app", "internal/cli", "internal/headless", "internal/tui")
		},
		why: "the agent is below the wiring and the front ends"},
	{covers: in("internal/server"), direct: true,
		forbids: func(g graph, dep string) bool {
			return g.ours(dep) && !strings.HasPrefix(dep, "internal/server/") && !oneOf(dep, "internal/app", "internal/agent",
				"internal/bus", "internal/config", "internal/permission", "internal/protocol", "internal/secret", "internal/sse", "internal/store")
		},
		why: "the HTTP front door reaches the core through app"},
	{covers: in("internal/acp", "internal/appserver"), direct: true,
		forbids: onlyMay("internal/app", "internal/protocol", "internal/jsonrpc"),
		why:     "the stdio front doors translate; the core is reached through app.Driver only"},
	{covers: in("internal/tui"), direct: true,
		forbids: onlyMay("internal/protocol", "internal/config", "internal/termsafe", "internal/modelcmd", "internal/mdterm", "internal/safefile", "internal/patch"),
		why:     "the TUI uses a Backend, the wire types and configuration, never the agent, the store or the model client"},
	{covers: func(pkg string) bool {
		return !oneOf(pkg, "internal/cli", "internal/server", "internal/acp", "internal/appserver") && !under(pkg, "internal/app")
	}, direct: true,
		forbids: func(_ graph, dep string) bool { return dep == "internal/app" },
		why:     "app is the one wiring point: only the command tree (cli) and the front doors (server, acp, appserver) import it"},
}

// checkLayering returns every violation of rules in g, sorted.
func checkLayering(g graph, rules []depRule) []string {
	var out []string
	for pkg := range g {
		if !g.ours(pkg) {
			continue
		}
		var reached map[string][]string
		for _, r := range rules {
			if !r.covers(pkg) {
				continue
			}
			if r.direct {
				for _, imp := range g[pkg].imports {
					if g[imp] != nil && r.forbids(g, imp) {
						out = append(out, pkg+" imports "+imp+": "+r.why)
					}
				}
				continue
			}
			if reached == nil {
				reached = g.reach(pkg)
			}
			for dep, path := range reached {
				if g[dep] != nil && r.forbids(g, dep) {
					out = append(out, pkg+" reaches "+dep+" ("+strings.Join(path, " → ")+"): "+r.why)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestLayering(t *testing.T) {
	t.Parallel()
	g := loadGraph(t)
	for _, v := range checkLayering(g, rules) {
		t.Error(v)
	}
}

// clone returns a copy of g that can be changed without changing g.
func (g graph) clone() graph {
	out := graph{}
	for p, n := range g {
		out[p] = &pkgNode{std: n.std, imports: append([]string(nil), n.imports...)}
	}
	return out
}

// Each kind of rule fails on a copy of the real graph with one forbidden
// import added: a direct one, and transitive ones two packages away.
func TestLayeringCatchesAForbiddenImport(t *testing.T) {
	t.Parallel()
	g := loadGraph(t)
	if len(checkLayering(g, rules)) > 0 {
		t.Skip("the real graph breaks the rules already (TestLayering says how)")
	}
	tests := []struct {
		from, to string
		want     string
	}{
		{"internal/protocol", "internal/store", "internal/protocol imports internal/store: a leaf"},
		{"internal/config", "internal/testutil", "internal/app reaches internal/testutil (internal/app → internal/config → internal/testutil): the fake model and the test fixtures never ship"},
		{"internal/sse", "github.com/google/jsonschema-go/jsonschema", "internal/llm/openai reaches github.com/google/jsonschema-go/jsonschema (internal/llm/openai → internal/sse → github.com/google/jsonschema-go/jsonschema): protocol is the wire format"},
		{"internal/catalog", "charm.land/lipgloss/v2", "internal/agent reaches charm.land/lipgloss/v2 (internal/agent → internal/catalog → charm.land/lipgloss/v2): the core"},
		{"internal/server", "internal/cli", "internal/server imports internal/cli: cli is the binary's command tree"},
		{"internal/tools", "internal/app", "internal/tools imports internal/app: tools never see the agent"},
	}
	for _, tt := range tests {
		if g[tt.to] == nil {
			t.Fatalf("%s is not in the graph", tt.to)
		}
		broken := g.clone()
		broken[tt.from].imports = append(broken[tt.from].imports, tt.to)
		got := checkLayering(broken, rules)
		found := false
		for _, v := range got {
			found = found || strings.HasPrefix(v, tt.want)
		}
		if !found {
			t.Errorf("adding %s → %s: violations %q\nwant one starting %q", tt.from, tt.to, got, tt.want)
		}
	}
}

// storeOpens returns where the Go files of dir (tests aside) call
// store.Open, the store's own opener.
func storeOpens(t *testing.T, fset *token.FileSet, files []*ast.File) []string {
	t.Helper()
	var out []string
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Open" {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "store" {
				out = append(out, fset.Position(sel.Pos()).String())
			}
			return true
		})
	}
	return out
}

// parseDir parses the Go files of dir, tests aside.
func parseDir(t *testing.T, fset *token.FileSet, dir string) []*ast.File {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// The CLI opens the store only through app (app.OpenStore): app decides
// the database's place, opening, migration and recovery, and a second
// opener would drift from it. cli may still use the store's types and
// errors.
func TestCLIOpensTheStoreThroughApp(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	for _, at := range storeOpens(t, fset, parseDir(t, fset, "internal/cli")) {
		t.Errorf("%s: the CLI opens the store itself; use app.OpenStore", at)
	}
	// The check, on a deliberately broken file.
	broken, err := parser.ParseFile(fset, "broken.go", `package cli
func f() { st, _ := store.Open(ctx, p); _ = st }`, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := storeOpens(t, fset, []*ast.File{broken}); len(got) != 1 {
		t.Errorf("a call of store.Open went unnoticed: %v", got)
	}
}

func oneOf(s string, set ...string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}
