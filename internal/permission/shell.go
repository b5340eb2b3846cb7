package permission

import (
	"fmt"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// PartKind says what a CommandPart is.
type PartKind string

// The kinds of CommandPart.
const (
	// PartCommand is a simple command (`ls -la`, `FOO=1 go test`), or a
	// declaration (`export X=1`).
	PartCommand PartKind = "command"
	// PartRedirect is an output redirection to a file (`> out.txt`).
	PartRedirect PartKind = "redirect"
	// PartFunction is a function definition; its body's commands are parts
	// of their own.
	PartFunction PartKind = "function"
	// PartUnparsed is text that could not be parsed.
	PartUnparsed PartKind = "unparsed"
)

// maxNesting bounds how deep eval, bash -c and similar strings are parsed.
const maxNesting = 8

// maxDepth bounds how deep commands may run inside others (sudo sudo …).
const maxDepth = 32

// Env is where a command line runs; every field should be an absolute,
// canonical path.
type Env struct {
	// Workspace is the workspace root.
	Workspace string
	// Workdir is the directory the command starts in; empty means the
	// workspace root; a relative one is taken against the workspace.
	Workdir string
	// Home is the user's home directory, what ~ and $HOME stand for.
	Home string
}

// CommandPart is one thing a shell command line does, judged on its own:
// a simple command, an output redirection, or a function definition. The
// parts of a command line are listed in the order they appear; commands
// that run inside another (`sudo X`, `xargs X`, `find -exec X`,
// `bash -c "X"`, `eval "X"`) follow it with a greater Depth.
type CommandPart struct {
	// Kind says what the part is.
	Kind PartKind `json:"kind"`
	// Text is the part as written (or rebuilt from its words).
	Text string `json:"text"`
	// Assigns are the NAME=value assignments before the command, values
	// resolved and unquoted.
	Assigns []string `json:"assigns,omitempty"`
	// Words are the command name and its arguments after quote removal
	// (`c''url` is curl, `\rm` is rm); a word that cannot be resolved is
	// kept as written (`$x`). For a redirection: the operator and target.
	Words []string `json:"words,omitempty"`
	// Name is the program name classification used: the base name of an
	// absolute path (`/bin/rm` is rm). Empty when unresolvable.
	Name string `json:"name,omitempty"`
	// Path is, for a redirection, the absolute file written; empty if it
	// cannot be resolved.
	Path string `json:"path,omitempty"`
	// Depth is 0 for a part at the top of the command line and one more
	// than its parent's for a part that runs inside another.
	Depth int `json:"depth"`
	// Parent is the index of the part this one runs inside, or -1.
	Parent int `json:"parent"`
	// ReadOnly reports that the part itself changes nothing and runs
	// nothing that is not also a part. A wrapper such as `timeout 5 X` is
	// read-only when it only runs its child X, which is judged separately.
	ReadOnly bool `json:"readOnly"`
	// Catastrophic reports a command on the catastrophic list (see
	// [CatastrophicChecks]): denied in every mode.
	Catastrophic bool `json:"catastrophic,omitempty"`
	// Unresolved reports a part that cannot be judged before running: the
	// command name comes from an expansion, a script is read from a pipe,
	// a recursive delete's target is unknown, or the text did not parse.
	// Such parts always ask (and are denied in plan mode).
	Unresolved bool `json:"unresolved,omitempty"`
	// Reason explains the classification in a few words.
	Reason string `json:"reason"`

	// nexact is how many leading Words are exact (resolved) values.
	nexact int
	// envOK reports that every assignment is to a harmless variable.
	envOK bool
	// assignsExact reports that every assignment's value is resolved.
	assignsExact bool
	// named reports a command whose program name was resolved; cwd and
	// args are set for it.
	named bool
	// cwd is the directory the part runs in, "" if unknown.
	cwd string
	// args are a command's arguments (Words after the name) as resolved.
	args []word
	// inputs are the targets of the input redirections (`< file`) of the
	// statement this part is the first command of.
	inputs []word
}

// ClassifyCommand parses command (bash syntax) and returns its parts, each
// classified. It never fails: text that cannot be parsed becomes one
// PartUnparsed part that is Unresolved (and Catastrophic if a rough scan
// finds a catastrophic command in it). It reads the git config of the
// repository around env.Workdir when it meets a git command.
func ClassifyCommand(command string, env Env) (parts []CommandPart) {
	defer func() {
		if r := recover(); r != nil {
			p := CommandPart{
				Kind: PartUnparsed, Text: command, Parent: -1, Unresolved: true,
				Reason: fmt.Sprintf("internal error classifying the command: %v", r),
			}
			// Fail closed: a catastrophic command still denies.
			func() {
				defer func() { _ = recover() }()
				if why := newClassifier(env).roughScan(command); why != "" {
					p.Catastrophic, p.Reason = true, p.Reason+"; it looks catastrophic: "+why
				}
			}()
			parts = []CommandPart{p}
		}
	}()
	return classify(command, env)
}

// classify is ClassifyCommand without the panic guard (the fuzz test calls
// it so that a panic is seen).
func classify(command string, env Env) []CommandPart {
	c := newClassifier(env)
	c.text(frame{src: command, parent: -1}, &scope{cwd: c.workdir}, command)
	return c.parts
}

// classifier holds the state of one ClassifyCommand call.
type classifier struct {
	workspace string // clean absolute workspace root (a placeholder if unknown)
	workdir   string // clean absolute starting directory
	home      string // clean absolute home (a placeholder if unknown)
	parts     []CommandPart
	funcs     map[string]bool       // functions defined so far
	visited   map[syntax.Node]bool  // commands already classified
	gitCache  map[string]gitVerdict // repository config verdicts by directory
}

// Placeholders for an unknown workspace or home: top-level directories, so
// deleting them still counts as catastrophic.
const (
	unknownWorkspace = "/~workspace"
	unknownHome      = "/~home"
)

func newClassifier(env Env) *classifier {
	c := &classifier{
		workspace: cleanAbs(env.Workspace, unknownWorkspace),
		home:      cleanAbs(env.Home, unknownHome),
		funcs:     map[string]bool{},
		visited:   map[syntax.Node]bool{},
		gitCache:  map[string]gitVerdict{},
	}
	c.workdir = c.workspace
	if env.Workdir != "" {
		if p, ok := absPath(c.workspace, env.Workdir); ok {
			c.workdir = p
		}
	}
	return c
}

// cleanAbs returns p cleaned if it is absolute, else fallback.
func cleanAbs(p, fallback string) string {
	if p == "" || !filepath.IsAbs(p) {
		return fallback
	}
	return filepath.Clean(p)
}

// frame is where in the command line the walker is.
type frame struct {
	src    string // the text being walked (nested strings have their own)
	parent int    // index of the enclosing part, or -1
	depth  int    // Depth of parts added here
	nest   int    // how many strings deep (eval, bash -c)
}

// child returns the frame for parts running inside part idx.
func (f frame) child(idx int) frame {
	return frame{src: f.src, parent: idx, depth: f.depth + 1, nest: f.nest}
}

// scope is the shell state the walker tracks: the working directory, which
// `cd` changes for the commands after it. An empty cwd is unknown.
type scope struct{ cwd string }

// pipeIn is the standard input of a pipeline stage: the stages before
// it. What they print is worked out only when a stage needs it (xargs, a
// shell reading a script), so long pipelines stay linear.
type pipeIn struct {
	r  *resolver
	up []*syntax.Stmt
}

// words returns the words of each simple command upstream.
func (in *pipeIn) words() [][]word {
	var out [][]word
	for _, st := range in.up {
		syntax.Walk(st, func(n syntax.Node) bool {
			if ce, ok := n.(*syntax.CallExpr); ok {
				out = append(out, in.r.words(ce.Args))
			}
			return true
		})
	}
	return out
}

// script returns what the last stage upstream prints when it is an echo
// or printf of literal words.
func (in *pipeIn) script() (string, bool) {
	last := in.up[len(in.up)-1]
	ce, ok := last.Cmd.(*syntax.CallExpr)
	if !ok || len(last.Redirs) > 0 {
		return "", false
	}
	ws := in.r.words(ce.Args)
	if len(ws) == 0 || !allExact(ws) {
		return "", false
	}
	switch ws[0].s {
	case "echo":
		args := values(ws[1:])
		for len(args) > 0 && (args[0] == "-n" || args[0] == "-e" || args[0] == "-E") {
			args = args[1:]
		}
		return strings.Join(args, " "), true
	case "printf":
		if len(ws) > 1 {
			return strings.ReplaceAll(strings.Join(values(ws[1:]), " "), `\n`, "\n"), true
		}
	}
	return "", false
}

func (c *classifier) res(f frame, sc *scope) *resolver {
	return &resolver{src: f.src, home: c.home, cwd: sc.cwd}
}

// add appends p and returns its index.
func (c *classifier) add(p CommandPart) int {
	c.parts = append(c.parts, p)
	return len(c.parts) - 1
}

// text parses src and walks it; a parse failure becomes an unparsed part.
func (c *classifier) text(f frame, sc *scope, src string) {
	if f.nest > maxNesting {
		c.add(CommandPart{
			Kind: PartUnparsed, Text: src, Depth: f.depth, Parent: f.parent, Unresolved: true,
			Reason: "commands nested too deeply to judge",
		})
		return
	}
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		p := CommandPart{
			Kind: PartUnparsed, Text: src, Depth: f.depth, Parent: f.parent, Unresolved: true,
			Reason: "cannot parse the command: " + err.Error(),
		}
		if why := c.roughScan(src); why != "" {
			p.Catastrophic = true
			p.Reason += "; it looks catastrophic: " + why
		}
		c.add(p)
		return
	}
	f.src = src
	c.stmts(f, sc, file.Stmts)
	defer c.evaluations(f, sc, file)
	// Safety net: every simple command in the tree is judged, even one
	// the structured walk above did not reach.
	syntax.Walk(file, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CallExpr:
			if !c.visited[x] {
				c.call(f, &scope{}, x, nil, nil)
			}
		case *syntax.FuncDecl:
			if !c.visited[x] {
				c.funcDecl(f, &scope{}, x)
			}
		case *syntax.DeclClause:
			if !c.visited[x] {
				c.decl(f, &scope{}, x)
			}
		}
		return true
	})
}

func (c *classifier) stmts(f frame, sc *scope, list []*syntax.Stmt) {
	for _, st := range list {
		c.stmt(f, sc, st, nil)
	}
}

func (c *classifier) stmt(f frame, sc *scope, st *syntax.Stmt, in *pipeIn) {
	if st == nil {
		return
	}
	first := len(c.parts)
	if st.Cmd != nil {
		c.command(f, sc, st, in)
	}
	c.redirects(f, sc, st, first)
}

// copyScope returns a copy of sc for a subshell or a branch.
func copyScope(sc *scope) *scope {
	s := *sc
	return &s
}

// branches walks alternative branches, each from the current directory;
// if any of them changes it, it becomes unknown.
func (c *classifier) branches(f frame, sc *scope, lists ...[]*syntax.Stmt) {
	for _, l := range lists {
		s := copyScope(sc)
		c.stmts(f, s, l)
		if s.cwd != sc.cwd {
			defer func() { sc.cwd = "" }()
		}
	}
}

func (c *classifier) command(f frame, sc *scope, st *syntax.Stmt, in *pipeIn) {
	switch x := st.Cmd.(type) {
	case *syntax.CallExpr:
		c.call(f, sc, x, st, in)
	case *syntax.BinaryCmd:
		switch x.Op {
		case syntax.Pipe, syntax.PipeAll:
			stages := append(flattenPipe(x.X), flattenPipe(x.Y)...)
			for i, s := range stages {
				var in *pipeIn
				if i > 0 {
					in = c.pipeInput(f, sc, stages[:i])
				}
				c.stmt(f, copyScope(sc), s, in)
			}
		case syntax.OrStmt:
			before := sc.cwd
			c.stmt(f, sc, x.X, nil)
			after := sc.cwd
			sc.cwd = before // the right side runs when the left one failed
			c.stmt(f, sc, x.Y, nil)
			if sc.cwd != after {
				sc.cwd = ""
			}
		default: // &&
			c.stmt(f, sc, x.X, nil)
			c.stmt(f, sc, x.Y, nil)
		}
	case *syntax.Subshell:
		c.stmts(f, copyScope(sc), x.Stmts)
	case *syntax.Block:
		c.stmts(f, sc, x.Stmts)
	case *syntax.IfClause:
		c.stmts(f, sc, x.Cond)
		lists := [][]*syntax.Stmt{x.Then}
		for e := x.Else; e != nil; e = e.Else {
			s := copyScope(sc)
			c.stmts(f, s, e.Cond)
			lists = append(lists, e.Then)
		}
		c.branches(f, sc, lists...)
	case *syntax.WhileClause:
		c.branches(f, sc, x.Cond, x.Do)
	case *syntax.ForClause:
		c.substs(f, sc, x.Loop)
		c.branches(f, sc, x.Do)
	case *syntax.CaseClause:
		c.substs(f, sc, x.Word)
		lists := make([][]*syntax.Stmt, 0, len(x.Items))
		for _, it := range x.Items {
			for _, p := range it.Patterns {
				c.substs(f, sc, p)
			}
			lists = append(lists, it.Stmts)
		}
		c.branches(f, sc, lists...)
	case *syntax.FuncDecl:
		c.funcDecl(f, sc, x)
	case *syntax.DeclClause:
		c.decl(f, sc, x)
	case *syntax.ArithmCmd:
		c.substs(f, sc, x)
	case *syntax.LetClause:
		c.substs(f, sc, x)
	case *syntax.TestClause:
		c.substs(f, sc, x)
	case *syntax.TimeClause:
		c.stmt(f, sc, x.Stmt, in)
	case *syntax.CoprocClause:
		c.substs(f, sc, x.Name)
		c.stmt(f, copyScope(sc), x.Stmt, nil)
	case *syntax.TestDecl:
		c.substs(f, sc, x.Description)
		c.stmt(f, copyScope(sc), x.Body, nil)
	default:
		c.add(CommandPart{
			Kind: PartUnparsed, Text: c.res(f, sc).text(x), Depth: f.depth, Parent: f.parent,
			Unresolved: true, Reason: fmt.Sprintf("unsupported shell construct %T", x),
		})
	}
}

// flattenPipe lists the stages of a pipeline.
func flattenPipe(st *syntax.Stmt) []*syntax.Stmt {
	if b, ok := st.Cmd.(*syntax.BinaryCmd); ok && len(st.Redirs) == 0 && !st.Negated &&
		(b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
		return append(flattenPipe(b.X), flattenPipe(b.Y)...)
	}
	return []*syntax.Stmt{st}
}

// pipeInput describes what the stages up flow into the next one.
func (c *classifier) pipeInput(f frame, sc *scope, up []*syntax.Stmt) *pipeIn {
	return &pipeIn{r: c.res(f, sc), up: up}
}

// substs judges the commands inside command and process substitutions in
// node (a word, an assignment, an arithmetic or test expression, …).
func (c *classifier) substs(f frame, sc *scope, node syntax.Node) {
	if isNil(node) {
		return
	}
	syntax.Walk(node, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst:
			c.stmts(f, copyScope(sc), x.Stmts)
			return false
		case *syntax.ProcSubst:
			c.stmts(f, copyScope(sc), x.Stmts)
			return false
		}
		return true
	})
}

// isNil reports a nil node, also a typed nil pointer in the interface.
func isNil(n syntax.Node) bool {
	switch x := n.(type) {
	case nil:
		return true
	case *syntax.Word:
		return x == nil
	case *syntax.Assign:
		return x == nil
	case *syntax.Stmt:
		return x == nil
	case *syntax.ArithmCmd:
		return x == nil
	case *syntax.LetClause:
		return x == nil
	case *syntax.TestClause:
		return x == nil
	}
	return false
}

// call judges a simple command.
func (c *classifier) call(f frame, sc *scope, x *syntax.CallExpr, st *syntax.Stmt, in *pipeIn) {
	c.visited[x] = true
	r := c.res(f, sc)
	for _, a := range x.Assigns {
		c.substs(f, sc, a)
	}
	for _, w := range x.Args {
		c.substs(f, sc, w)
	}
	assigns := make([]assign, 0, len(x.Assigns))
	for _, a := range x.Assigns {
		assigns = append(assigns, c.assign(r, a))
	}
	c.simple(f, sc, cmdCtx{
		text:    strings.TrimSpace(r.text(x)),
		assigns: assigns,
		words:   r.words(x.Args),
		stmt:    st,
		in:      in,
	})
}

// assign is a resolved NAME=value assignment.
type assign struct {
	name  string
	value word
}

func (c *classifier) assign(r *resolver, a *syntax.Assign) assign {
	v := lit("")
	switch {
	case a.Value != nil:
		v = r.word(a.Value)
	case a.Array != nil:
		v = word{s: r.text(a.Array)}
	}
	name := ""
	if a.Name != nil {
		name = a.Name.Value
	}
	return assign{name: name, value: v}
}

// String returns NAME=value, unquoted (as CommandPart.Assigns holds it).
func (a assign) String() string { return a.name + "=" + a.value.s }

// quoted returns NAME=value with the value quoted for a command line.
func (a assign) quoted() string { return a.name + "=" + quoteWord(a.value.s) }
