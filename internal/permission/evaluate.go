package permission

import (
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Bash turns text into code in places a reader of the command line does
// not see: it evaluates a word as arithmetic in $((…)), $[…], ((…)), let,
// for ((…)), [[ a -eq b ]], array subscripts and ${x:offset:length}, and it
// reads a word as a variable name in test -v, printf -v, read, unset,
// declare and its family, namerefs and ${!x}. Evaluating either runs the
// command substitutions inside any array subscript it meets, and
// arithmetic evaluates the value of every variable it names, recursively:
//
//	x='a[$(touch F)]'; echo $((x))   # runs touch
//	test -v 'a[$(touch F)]'          # runs touch
//
// The classifier judges the commands it can see; this file finds the
// places where bash may evaluate text it cannot see as code, and turns
// each into a part that cannot be judged before running (it asks in every
// mode, and plan mode denies it). The rule, from the outside attack run of
// issue 19: a word evaluated as arithmetic or as a variable name is safe
// only when it is an integer, a plain name, or a variable that holds an
// integer (assigned here only by arithmetic or integer literals, or not
// assigned here at all, so its value is the environment's). Anything with
// an expansion, a quote or a subscript that is not itself safe is a
// hazard. Strings of the command line that hold a command substitution are
// then judged as the commands they would run, so a deny rule (curl) or the
// catastrophic list still matches them.
//
// Which builtins evaluate what was checked against bash 5.2 (test -eq,
// shift, exit, printf %d and ulimit use plain number parsing; [[ -eq ]]
// and the rest above evaluate), and TestEvaluationAgainstBash checks the
// whole against real bash under strace.

// PartEvaluation is a word bash evaluates as arithmetic or as a variable
// name whose value cannot be judged before running (see evaluate.go).
const PartEvaluation PartKind = "evaluation"

// evaluations adds a part for each place in file where bash may evaluate
// text as code, and judges the commands that strings of file would run if
// they were.
func (c *classifier) evaluations(f frame, sc *scope, file *syntax.File) {
	s := &evalScan{
		r:       c.res(f, sc),
		nested:  f.nest > 0,
		tainted: map[string]bool{},
		ints:    map[string]bool{},
		intAttr: map[string]bool{},
		nameref: map[string]bool{},
		seen:    map[string]bool{},
	}
	syntax.Walk(file, s.taint)
	syntax.Walk(file, s.visit)
	if len(s.found) == 0 {
		return
	}
	first := -1
	for _, h := range s.found {
		idx := c.add(CommandPart{
			Kind: PartEvaluation, Text: h.text, Depth: f.depth, Parent: f.parent,
			Unresolved: true, envOK: true, assignsExact: true, Reason: h.why,
		})
		if first < 0 {
			first = idx
		}
	}
	c.payloads(f.child(first), sc, file)
}

// payloads judges, as commands run by the part f.parent, the command
// substitutions inside the strings of file: what bash runs if it
// evaluates them.
func (c *classifier) payloads(f frame, sc *scope, file *syntax.File) {
	r := c.res(f, sc)
	done := map[string]bool{}
	syntax.Walk(file, func(n syntax.Node) bool {
		w, ok := n.(*syntax.Word)
		if !ok {
			return true
		}
		v := r.word(w)
		if !v.exact || done[v.s] || !strings.ContainsAny(v.s, "$`") {
			return true
		}
		done[v.s] = true
		c.payload(f, sc, v.s)
		return true
	})
}

// payload judges the command substitutions in text, expanded as bash
// expands a subscript (like the body of a here-document).
func (c *classifier) payload(f frame, sc *scope, text string) {
	if f.nest >= maxNesting {
		return
	}
	doc, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Document(strings.NewReader(text))
	if err != nil {
		p := CommandPart{
			Kind: PartUnparsed, Text: text, Depth: f.depth, Parent: f.parent, Unresolved: true,
			Reason: "a string that may be evaluated as code cannot be parsed: " + err.Error(),
		}
		if why := c.roughScan(text); why != "" {
			p.Catastrophic, p.Reason = true, p.Reason+"; it looks catastrophic: "+why
		}
		c.add(p)
		return
	}
	f.src, f.nest = text, f.nest+1
	c.substs(f, sc, doc)
}

// evalScan finds the hazards of one parsed text.
type evalScan struct {
	r *resolver
	// nested reports text that runs inside another command line (eval,
	// bash -c), whose variables may come from it.
	nested bool
	// tainted are names that may hold text other than an integer.
	tainted map[string]bool
	// ints are names assigned here, only integers.
	ints map[string]bool
	// intAttr are names declared with -i: every assignment is arithmetic.
	intAttr map[string]bool
	// nameref are names declared with -n: their value is a variable name.
	nameref map[string]bool
	// anyName reports that some variable is assigned in a way that cannot
	// be followed (a name built at run time, eval, source, trap): every
	// variable is suspect.
	anyName bool
	// where, when set, is the construct reported instead of the node's
	// text (for text parsed from a string).
	where string
	// depth counts the strings parsed inside each other, to bound it.
	depth int
	found []evalHazard
	seen  map[string]bool
}

// evalHazard is one place where bash may evaluate text as code.
type evalHazard struct{ text, why string }

func (s *evalScan) report(n syntax.Node, why string) {
	text := s.where
	if text == "" {
		text = strings.TrimSpace(s.r.text(n))
	}
	if s.seen[text+"\x00"+why] {
		return
	}
	s.seen[text+"\x00"+why] = true
	s.found = append(s.found, evalHazard{text: text, why: why})
}

var (
	intLiteral = regexp.MustCompile(`^[-+]?([0-9]+|0[xX][0-9a-fA-F]+|[0-9]+#[0-9a-zA-Z@_]+)$`)
	plainName  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	fdName     = regexp.MustCompile(`^\{[A-Za-z_][A-Za-z0-9_]*\[.*\]\}$`)
)

// integerVars are shell variables that always hold an integer.
var integerVars = map[string]bool{
	"RANDOM": true, "SRANDOM": true, "LINENO": true, "SECONDS": true, "EPOCHSECONDS": true,
	"BASHPID": true, "PPID": true, "UID": true, "EUID": true, "OPTIND": true, "SHLVL": true,
	"HISTCMD": true,
}

// shellSetVars are variables bash itself sets from text the command line
// controls (a read line, a match, a directory).
var shellSetVars = map[string]bool{
	"REPLY": true, "BASH_REMATCH": true, "MAPFILE": true, "OPTARG": true, "PWD": true,
	"OLDPWD": true, "COPROC": true, "BASH_COMMAND": true, "BASH_ARGV": true, "BASH_ARGV0": true,
	"BASH_SOURCE": true, "FUNCNAME": true, "DIRSTACK": true, "BASH_EXECUTION_STRING": true,
	"_": true, "READLINE_LINE": true, "COMP_WORDS": true, "COMP_LINE": true, "PIPESTATUS": true,
	"BASH_ALIASES": true, "BASH_CMDS": true, "GROUPS": true, "HOSTNAME": true,
}

// integerWord reports a word whose value is an integer (or empty).
func integerWord(w *syntax.Word) bool {
	if w == nil || len(w.Parts) == 0 {
		return true
	}
	if len(w.Parts) != 1 {
		return false
	}
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		return intLiteral.MatchString(p.Value)
	case *syntax.ArithmExp:
		return true
	case *syntax.ParamExp:
		return p.Length && !p.Excl
	}
	return false
}

// safeName reports whether the variable name holds an integer when bash
// evaluates it.
func (s *evalScan) safeName(name string) bool {
	switch {
	case s.anyName, s.tainted[name], s.nameref[name], shellSetVars[name]:
		return false
	case integerVars[name], s.ints[name]:
		return true
	}
	// Not assigned here: at the top of a command line its value is the
	// environment mx-claw gives commands (an allow-list of the user's
	// own variables); inside eval or bash -c it may be anything.
	return !s.nested
}

// taint records, before the hazards are looked for, how each variable of
// the text gets its value.
func (s *evalScan) taint(n syntax.Node) bool {
	switch x := n.(type) {
	case *syntax.Assign:
		if x.Name == nil {
			return true
		}
		name := x.Name.Value
		if x.Array != nil || x.Index != nil || !integerWord(x.Value) {
			s.tainted[name] = true
		} else {
			s.ints[name] = true
		}
	case *syntax.BinaryArithm:
		if l, ok := x.X.(*syntax.Word); ok && isArithAssign(x.Op) {
			if v := l.Lit(); plainName.MatchString(v) {
				s.ints[v] = true
			}
		}
	case *syntax.ForClause:
		if wi, ok := x.Loop.(*syntax.WordIter); ok && wi.Name != nil {
			s.tainted[wi.Name.Value] = true
		}
	case *syntax.ParamExp:
		if x.Exp != nil && x.Param != nil && (x.Exp.Op == syntax.AssignUnset || x.Exp.Op == syntax.AssignUnsetOrNull) &&
			!integerWord(x.Exp.Word) {
			s.tainted[x.Param.Value] = true
		}
	case *syntax.CoprocClause:
		if v := x.Name.Lit(); v != "" {
			s.tainted[v] = true
		}
	case *syntax.DeclClause:
		s.declTaint(x)
	case *syntax.CallExpr:
		s.callTaint(x)
	}
	return true
}

func isArithAssign(op syntax.BinAritOperator) bool {
	switch op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn,
		syntax.RemAssgn, syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn,
		syntax.ShrAssgn:
		return true
	}
	return false
}

// declFlags returns the attributes a declaration's options set, and false
// when an option cannot be resolved.
func declFlags(variant string, opts []word) (intAttr, ref, ok bool) {
	ref = variant == "nameref"
	for _, o := range opts {
		if !o.exact {
			return false, false, false
		}
		if strings.HasPrefix(o.s, "-") {
			intAttr = intAttr || strings.Contains(o.s, "i")
			ref = ref || strings.Contains(o.s, "n")
		}
	}
	return intAttr, ref, true
}

// declTaint records the variables a declare, local, export, readonly or
// typeset sets.
func (s *evalScan) declTaint(d *syntax.DeclClause) {
	variant := "declare"
	if d.Variant != nil {
		variant = d.Variant.Value
	}
	var opts []word
	for _, a := range d.Args {
		if a.Name == nil && a.Value != nil {
			if w := s.r.word(a.Value); !w.exact || strings.HasPrefix(w.s, "-") || strings.HasPrefix(w.s, "+") {
				opts = append(opts, w)
			}
		}
	}
	intAttr, ref, ok := declFlags(variant, opts)
	if !ok {
		s.anyName = true
		return
	}
	for _, a := range d.Args {
		name := ""
		switch {
		case a.Name != nil:
			name = a.Name.Value // its value is recorded by the Assign case
		case a.Value != nil:
			w := s.r.word(a.Value)
			if strings.HasPrefix(w.s, "-") || strings.HasPrefix(w.s, "+") {
				continue
			}
			n, v, hasValue := strings.Cut(w.s, "=")
			name, _, _ = strings.Cut(n, "[")
			if hasValue && !intLiteral.MatchString(v) {
				s.tainted[name] = true
			}
		}
		if intAttr {
			s.intAttr[name] = true
		}
		if ref {
			s.nameref[name] = true
		}
	}
}

// assigningBuiltins are the builtins that set variables named by their
// arguments.
var assigningBuiltins = map[string]bool{
	"read": true, "mapfile": true, "readarray": true, "printf": true, "getopts": true,
	"wait": true, "declare": true, "typeset": true, "local": true, "export": true,
	"readonly": true, "select": true,
}

// codeBuiltins run text as commands in the current shell, so they may set
// any variable.
var codeBuiltins = map[string]bool{"eval": true, "source": true, ".": true, "trap": true, "alias": true}

// callTaint records the variables a simple command may set.
func (s *evalScan) callTaint(x *syntax.CallExpr) {
	ws := s.r.words(x.Args)
	if len(ws) > 0 && !ws[0].exact {
		s.anyName = true // the command might be read or eval
		return
	}
	for i, w := range ws {
		if !w.exact {
			continue
		}
		if codeBuiltins[w.s] {
			s.anyName = true
			return
		}
		if !assigningBuiltins[w.s] {
			continue
		}
		var intAttr, ref bool
		switch w.s {
		case "declare", "typeset", "local", "export", "readonly":
			intAttr, ref, _ = declFlags(w.s, ws[i+1:])
		}
		for _, a := range ws[i+1:] {
			if !a.exact {
				s.anyName = true
				return
			}
			name, _, _ := strings.Cut(a.s, "=")
			name, _, _ = strings.Cut(name, "[")
			if plainName.MatchString(name) {
				s.tainted[name] = true
				if intAttr {
					s.intAttr[name] = true
				}
				if ref {
					s.nameref[name] = true
				}
			}
		}
		return
	}
}

// visit reports the hazards at node n.
func (s *evalScan) visit(n syntax.Node) bool {
	switch x := n.(type) {
	case *syntax.ArithmExp:
		s.arith(x, x.X)
	case *syntax.ArithmCmd:
		s.arith(x, x.X)
	case *syntax.LetClause:
		for _, e := range x.Exprs {
			s.arith(x, e)
		}
	case *syntax.ForClause:
		if cl, ok := x.Loop.(*syntax.CStyleLoop); ok {
			s.arith(cl, cl.Init)
			s.arith(cl, cl.Cond)
			s.arith(cl, cl.Post)
		}
	case *syntax.ParamExp:
		s.param(x)
	case *syntax.Assign:
		s.assign(x)
	case *syntax.ArrayElem:
		if x.Index != nil {
			outer := s.where
			if outer == "" {
				s.where = "[" + s.r.text(x.Index) + "]=" + s.r.text(x.Value)
			}
			s.arith(x, x.Index)
			s.where = outer
		}
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			for _, side := range []syntax.TestExpr{x.X, x.Y} {
				if w, ok := side.(*syntax.Word); ok {
					s.operand(x, w)
				}
			}
		}
	case *syntax.UnaryTest:
		if x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar {
			if w, ok := x.X.(*syntax.Word); ok {
				s.nameWord(x, s.r.word(w))
			}
		}
	case *syntax.DeclClause:
		s.decl(x)
	case *syntax.CallExpr:
		s.call(x)
	case *syntax.Redirect:
		if x.N != nil && fdName.MatchString(x.N.Value) {
			s.nameString(x, x.N.Value[1:len(x.N.Value)-1]) // {name[i]}>file
		}
	}
	return true
}

// arith checks an arithmetic expression of context ctx.
func (s *evalScan) arith(ctx syntax.Node, e syntax.ArithmExpr) {
	switch x := e.(type) {
	case nil:
	case *syntax.BinaryArithm:
		if l, ok := x.X.(*syntax.Word); ok && x.Op == syntax.Assgn && plainName.MatchString(l.Lit()) {
			// Plain assignment: the name is written, not evaluated.
		} else {
			s.arith(ctx, x.X)
		}
		s.arith(ctx, x.Y)
	case *syntax.UnaryArithm:
		s.arith(ctx, x.X)
	case *syntax.ParenArithm:
		s.arith(ctx, x.X)
	case *syntax.Word:
		s.operand(ctx, x)
	}
}

// operand checks a word bash evaluates as arithmetic.
func (s *evalScan) operand(ctx syntax.Node, w *syntax.Word) {
	if w == nil || len(w.Parts) == 0 {
		return
	}
	if len(w.Parts) == 1 {
		switch p := w.Parts[0].(type) {
		case *syntax.Lit:
			s.arithValue(ctx, p.Value)
			return
		case *syntax.ArithmExp:
			return // an integer; its inside is visited on its own
		case *syntax.ParamExp:
			if !s.safeParam(p) {
				s.report(ctx, "bash evaluates "+s.r.text(p)+" as arithmetic, and its value cannot be known before running "+
					"(an array subscript in it would run commands)")
			}
			return
		case *syntax.CmdSubst:
			if s.where != "" {
				return // in text parsed from a string: arithText reports it
			}
			s.report(ctx, "bash evaluates the output of "+s.r.text(p)+" as arithmetic "+
				"(an array subscript in it would run commands)")
			return
		}
	}
	v := s.r.word(w)
	if !v.exact {
		s.report(ctx, "bash evaluates "+s.r.text(w)+" as arithmetic, and its value cannot be known before running")
		return
	}
	s.arithValue(ctx, v.s)
}

// arithValue checks text bash evaluates as arithmetic.
func (s *evalScan) arithValue(ctx syntax.Node, v string) {
	v = strings.TrimSpace(v)
	switch {
	case v == "" || intLiteral.MatchString(v):
	case plainName.MatchString(v):
		if !s.safeName(v) {
			s.report(ctx, "bash evaluates the variable "+v+" as arithmetic, and it may hold text set in this command "+
				"(an array subscript in it would run commands)")
		}
	default:
		s.arithText(ctx, v)
	}
}

// arithText parses text that bash evaluates as arithmetic and checks it.
func (s *evalScan) arithText(ctx syntax.Node, text string) {
	e, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Arithmetic(strings.NewReader(text))
	where := s.where
	if where == "" {
		where = strings.TrimSpace(s.r.text(ctx))
	}
	if err == nil && e == nil {
		return // blank: zero
	}
	if err != nil || s.depth >= maxNesting {
		s.report(ctx, "bash evaluates "+quoteWord(text)+" as arithmetic, and it cannot be judged before running")
		return
	}
	if w, ok := e.(*syntax.Word); ok && w.Lit() == text {
		// Neither a number nor a name, yet one word: bash would fail on
		// it, but judging it again would not end.
		s.report(ctx, "bash evaluates "+quoteWord(text)+" as arithmetic, and it cannot be judged before running")
		return
	}
	sub := *s
	sub.depth++
	sub.r = &resolver{src: text, home: s.r.home, cwd: s.r.cwd}
	sub.where, sub.found = where, nil
	sub.arith(e, e)
	syntax.Walk(e, sub.visit)
	if hasSubst(e) {
		sub.report(e, "bash evaluates "+quoteWord(text)+" as arithmetic, which runs the command substitution in it")
	}
	s.found = append(s.found, sub.found...)
}

// hasSubst reports a command or process substitution in n.
func hasSubst(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			found = true
		}
		return !found
	})
	return found
}

// safeParam reports a parameter expansion whose value is an integer.
func (s *evalScan) safeParam(p *syntax.ParamExp) bool {
	if p.Param == nil || p.NestedParam != nil {
		return false
	}
	if p.Length {
		return !p.Excl // ${#x}: its subscript is visited on its own
	}
	if p.Excl || p.Slice != nil || p.Repl != nil || p.Names != 0 || p.Exp != nil || p.Width {
		return false
	}
	switch name := p.Param.Value; name {
	case "#", "?", "$", "!":
		return true
	case "@", "*", "-", "0":
		return false
	default:
		if name[0] >= '0' && name[0] <= '9' {
			return false // a positional parameter
		}
		return s.safeName(name)
	}
}

// param checks the subscript, slice, indirection and prompt expansion of
// a parameter expansion.
func (s *evalScan) param(p *syntax.ParamExp) {
	if p.Index != nil && !allIndex(p.Index) {
		s.arith(p, p.Index)
	}
	if p.Slice != nil {
		s.arith(p, p.Slice.Offset)
		s.arith(p, p.Slice.Length)
	}
	name := ""
	if p.Param != nil {
		name = p.Param.Value
	}
	if p.Excl && p.Names == 0 && (p.Index == nil || !allIndex(p.Index)) && !s.safeParamName(name) {
		s.report(p, "bash reads the value of "+name+" as a variable name in "+s.r.text(p)+
			", and a subscript in it would run commands")
	}
	if p.Exp != nil && p.Exp.Op == syntax.OtherParamOps && p.Exp.Word != nil && strings.Contains(p.Exp.Word.Lit(), "P") &&
		!s.safeParamName(name) {
		s.report(p, "bash expands the value of "+name+" as a prompt in "+s.r.text(p)+", which runs commands in it")
	}
}

// safeParamName is safeName for a parameter name that may be special.
func (s *evalScan) safeParamName(name string) bool {
	switch name {
	case "#", "?", "$", "!":
		return true
	case "", "@", "*", "-", "0":
		return false
	}
	if name[0] >= '0' && name[0] <= '9' {
		return false
	}
	return s.safeName(name)
}

// allIndex reports the subscripts [@] and [*].
func allIndex(e syntax.ArithmExpr) bool {
	w, ok := e.(*syntax.Word)
	return ok && (w.Lit() == "@" || w.Lit() == "*")
}

// assign checks an assignment's subscript, and its value where bash
// evaluates it (an integer or nameref variable).
func (s *evalScan) assign(a *syntax.Assign) {
	if a.Index != nil {
		s.arith(a, a.Index)
	}
	if a.Name == nil {
		return
	}
	if s.intAttr[a.Name.Value] && a.Array != nil {
		for _, e := range a.Array.Elems {
			s.operand(a, e.Value)
		}
	}
	if a.Value == nil {
		return
	}
	if s.intAttr[a.Name.Value] {
		s.operand(a, a.Value)
	}
	if s.nameref[a.Name.Value] {
		s.nameWord(a, s.r.word(a.Value))
	}
}

// nameWord checks a word bash reads as a variable name.
func (s *evalScan) nameWord(ctx syntax.Node, w word) {
	if !w.exact {
		s.report(ctx, "bash reads "+w.s+" as a variable name, and it cannot be known before running "+
			"(a subscript in it would run commands)")
		return
	}
	s.nameString(ctx, w.s)
}

// nameString checks text bash reads as a variable name: the subscript of
// name[subscript] is evaluated as arithmetic.
func (s *evalScan) nameString(ctx syntax.Node, name string) {
	i := strings.IndexByte(name, '[')
	if i < 0 {
		return
	}
	sub := name[i+1:]
	if j := strings.LastIndexByte(sub, ']'); j >= 0 {
		sub = sub[:j]
	}
	if sub == "@" || sub == "*" {
		return
	}
	s.arithValue(ctx, sub)
}

// decl checks the names and evaluated values of a declaration whose
// arguments the parser could not split (quoted or built words).
func (s *evalScan) decl(d *syntax.DeclClause) {
	variant := "declare"
	if d.Variant != nil {
		variant = d.Variant.Value
	}
	var opts []word
	for _, a := range d.Args {
		if a.Name == nil && a.Value != nil {
			if w := s.r.word(a.Value); !w.exact || strings.HasPrefix(w.s, "-") || strings.HasPrefix(w.s, "+") {
				opts = append(opts, w)
			}
		}
	}
	intAttr, ref, ok := declFlags(variant, opts)
	if !ok {
		s.report(d, variant+" with options that cannot be known before running")
		return
	}
	for _, a := range d.Args {
		if a.Name != nil || a.Value == nil {
			continue
		}
		w := s.r.word(a.Value)
		if w.exact && (strings.HasPrefix(w.s, "-") || strings.HasPrefix(w.s, "+")) {
			continue
		}
		if !w.exact {
			s.report(d, variant+" of a variable whose name cannot be known before running")
			continue
		}
		s.declArg(d, w.s, intAttr, ref)
	}
}

// declArg checks one NAME[=VALUE] argument of a declaration.
func (s *evalScan) declArg(ctx syntax.Node, arg string, intAttr, ref bool) {
	name, value, hasValue := strings.Cut(arg, "=")
	s.nameString(ctx, name)
	if !hasValue {
		return
	}
	if intAttr {
		s.arithValue(ctx, value)
	}
	if ref {
		s.nameString(ctx, value)
	}
}

// call checks the arguments builtins read as variable names or evaluate
// as arithmetic.
func (s *evalScan) call(x *syntax.CallExpr) {
	ws := s.r.words(x.Args)
	for _, w := range ws {
		if w.exact && fdName.MatchString(w.s) {
			s.nameString(x, w.s[1:len(w.s)-1]) // {name[i]}>file
		}
	}
	for len(ws) > 0 && ws[0].exact && (ws[0].s == "builtin" || ws[0].s == "command") {
		ws = ws[1:]
		for len(ws) > 0 && ws[0].exact && strings.HasPrefix(ws[0].s, "-") {
			if ws[0].s == "-v" || ws[0].s == "-V" {
				return // only looks the command up
			}
			ws = ws[1:]
		}
	}
	if len(ws) == 0 || !ws[0].exact {
		return
	}
	name, args := ws[0].s, ws[1:]
	optionValue := func(i int) (word, bool) {
		if i+1 < len(args) {
			return args[i+1], true
		}
		return word{}, false
	}
	switch name {
	case "test", "[":
		for i, a := range args {
			if a.exact && (a.s == "-v" || a.s == "-R") {
				if v, ok := optionValue(i); ok {
					s.nameWord(x, v)
				}
			}
		}
	case "printf", "wait":
		for i, a := range args {
			if a.exact && a.s == "-v" || name == "wait" && a.exact && a.s == "-p" {
				if v, ok := optionValue(i); ok {
					s.nameWord(x, v)
				}
			}
		}
	case "read", "mapfile", "readarray", "getopts", "unset":
		valued := map[string]string{"read": "dinNptu", "mapfile": "dnOsuCc", "readarray": "dnOsuCc"}[name]
		operands := 0
		for i := 0; i < len(args); i++ {
			a := args[i]
			if a.exact && strings.HasPrefix(a.s, "-") && len(a.s) > 1 && operands == 0 {
				if a.s == "--" {
					continue
				}
				last := a.s[len(a.s)-1:]
				switch {
				case name == "read" && last == "a":
					if v, ok := optionValue(i); ok {
						s.nameWord(x, v)
					}
					i++
				case strings.Contains(valued, last):
					i++
				}
				continue
			}
			operands++
			if name == "getopts" && operands == 1 {
				continue // the option string
			}
			s.nameWord(x, a)
		}
	case "declare", "typeset", "local", "export", "readonly":
		intAttr, ref, ok := declFlags(name, args)
		if !ok {
			s.report(x, name+" with options that cannot be known before running")
			return
		}
		for _, a := range args {
			if !a.exact {
				s.nameWord(x, a)
				continue
			}
			if !strings.HasPrefix(a.s, "-") && !strings.HasPrefix(a.s, "+") {
				s.declArg(x, a.s, intAttr, ref)
			}
		}
	case "let":
		for _, a := range args {
			if !a.exact {
				s.report(x, "let evaluates "+a.s+" as arithmetic, and it cannot be known before running")
				continue
			}
			s.arithValue(x, a.s)
		}
	}
}
