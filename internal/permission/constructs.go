package permission

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// funcDecl records a function definition and judges its body.
func (c *classifier) funcDecl(f frame, sc *scope, fd *syntax.FuncDecl) {
	c.visited[fd] = true
	names := []string{}
	if fd.Name != nil {
		names = append(names, fd.Name.Value)
	}
	for _, n := range fd.Names {
		names = append(names, n.Value)
	}
	for _, n := range names {
		c.funcs[n] = true
	}
	p := CommandPart{
		Kind: PartFunction, Text: strings.Join(names, " ") + "() { … }", Words: names,
		Depth: f.depth, Parent: f.parent, ReadOnly: true, envOK: true, nexact: len(names),
		Reason: "defines a function; the commands in its body are judged on their own",
	}
	if len(names) > 0 {
		p.Name = names[0]
	}
	for _, n := range names {
		if forkBomb(n, fd.Body) {
			p.Catastrophic = true
			p.Reason = "fork bomb: function " + n + " starts copies of itself in the background or through a pipe"
		}
	}
	idx := c.add(p)
	c.stmt(f.child(idx), copyScope(sc), fd.Body, nil)
}

// forkBomb reports whether body calls name and runs something in the
// background or through a pipe: the shape of `:(){ :|:& };:`.
func forkBomb(name string, body *syntax.Stmt) bool {
	self, async := false, false
	syntax.Walk(body, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CallExpr:
			if len(x.Args) > 0 && x.Args[0].Lit() == name {
				self = true
			}
		case *syntax.BinaryCmd:
			if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
				async = true
			}
		case *syntax.Stmt:
			if x.Background || x.Coprocess || x.Disown {
				async = true
			}
		}
		return true
	})
	return self && async
}

// decl judges export, declare, local, readonly and typeset.
func (c *classifier) decl(f frame, sc *scope, d *syntax.DeclClause) {
	c.visited[d] = true
	r := c.res(f, sc)
	for _, a := range d.Args {
		c.substs(f, sc, a)
	}
	variant := "declare"
	if d.Variant != nil {
		variant = d.Variant.Value
	}
	words := []string{variant}
	ro, reason, named := true, "sets shell variables", false
	for _, a := range d.Args {
		if a.Name == nil {
			if a.Value != nil {
				w := r.word(a.Value)
				words = append(words, w.s)
				if !w.exact || strings.Contains(w.s, "p") || strings.Contains(w.s, "f") {
					ro, reason = false, variant+" "+w.s+" may print variables or functions"
				}
			}
			continue
		}
		named = true
		words = append(words, c.assign(r, a).quoted())
		if !benignVar(a.Name.Value) {
			ro, reason = false, "sets "+a.Name.Value+", which changes how later commands run"
		}
	}
	if !named {
		ro, reason = false, variant+" without names prints variables, which may hold secrets"
	}
	c.add(CommandPart{
		Kind: PartCommand, Text: strings.TrimSpace(r.text(d)), Words: words, Name: variant,
		Depth: f.depth, Parent: f.parent, ReadOnly: ro, Reason: reason, envOK: true, nexact: len(words),
	})
}

// redirects judges the output redirections of st, and records the files
// its input redirections read with part first, the statement's first
// command (if it has one).
func (c *classifier) redirects(f frame, sc *scope, st *syntax.Stmt, first int) {
	r := c.res(f, sc)
	for _, rd := range st.Redirs {
		c.substs(f, sc, rd.Word)
		c.substs(f, sc, rd.Hdoc)
		if rd.Op == syntax.RdrIn {
			t := r.word(rd.Word)
			if first < len(c.parts) {
				c.parts[first].inputs = append(c.parts[first].inputs, t)
			}
			reason := ""
			switch {
			case t.exact && (strings.HasPrefix(t.s, "/dev/tcp/") || strings.HasPrefix(t.s, "/dev/udp/")):
				reason = "opens a network connection"
			case t.exact:
				if why := deviceFile(sc.cwd, t.s); why != "" {
					reason = "reads " + t.s + ", " + why + ", which may never end"
				}
			}
			if reason != "" {
				c.add(CommandPart{
					Kind: PartRedirect, Text: strings.TrimSpace(r.text(rd)), Words: []string{rd.Op.String(), t.s},
					Depth: f.depth, Parent: f.parent, envOK: true, nexact: 2, assignsExact: true,
					Reason: reason,
				})
			}
			continue
		}
		if !writesFile(rd) {
			continue
		}
		t := r.word(rd.Word)
		p := CommandPart{
			Kind: PartRedirect, Text: strings.TrimSpace(r.text(rd)), Words: []string{rd.Op.String(), t.s},
			Depth: f.depth, Parent: f.parent, envOK: true, assignsExact: true,
		}
		path, ok := absPath(sc.cwd, t.s)
		switch {
		case !t.exact:
			p.Reason = "writes to a file whose name cannot be resolved before running"
		case !ok:
			p.Reason = "writes to a relative path from an unknown directory"
		case safeDevice(path):
			continue
		case diskDevice(path):
			p.Path, p.Catastrophic = path, true
			p.Reason = "writes to the disk device " + path
		default:
			p.Path = path
			p.Reason = "writes " + path
		}
		p.nexact = 2
		c.add(p)
	}
}

// writesFile reports whether rd writes to a file (rather than reading,
// duplicating a descriptor or feeding a here-document).
func writesFile(rd *syntax.Redirect) bool {
	switch rd.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll,
		syntax.AppAll, syntax.RdrAllClob, syntax.AppAllClob, syntax.RdrInOut:
		return true
	case syntax.DplOut:
		w := rd.Word.Lit()
		if w == "" || w == "-" {
			return false // $fd or closing
		}
		return strings.Trim(w, "0123456789-") != ""
	}
	return false
}

// hereScript returns the text of st's here-document or here-string, if it
// is a literal.
func hereScript(r *resolver, st *syntax.Stmt) (string, bool) {
	if st == nil {
		return "", false
	}
	for _, rd := range st.Redirs {
		switch rd.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if rd.Hdoc == nil {
				return "", true
			}
			var b strings.Builder
			for _, p := range rd.Hdoc.Parts {
				l, ok := p.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(l.Value)
			}
			return b.String(), true
		case syntax.WordHdoc:
			w := r.word(rd.Word)
			return w.s, w.exact
		}
	}
	return "", false
}
