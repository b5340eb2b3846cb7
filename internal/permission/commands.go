package permission

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// cmdCtx is a simple command to judge.
type cmdCtx struct {
	text    string
	assigns []assign
	words   []word
	stmt    *syntax.Stmt // for here-documents and input redirections
	in      *pipeIn      // standard input from a pipeline, or nil
}

// simple judges one simple command, adding its part (and the parts of the
// commands it runs) and returning the part's index.
func (c *classifier) simple(f frame, sc *scope, cc cmdCtx) int {
	p := CommandPart{
		Kind: PartCommand, Text: cc.text, Words: values(cc.words),
		Depth: f.depth, Parent: f.parent, envOK: true, assignsExact: true,
	}
	var quoted []string
	for _, a := range cc.assigns {
		p.Assigns = append(p.Assigns, a.String())
		quoted = append(quoted, a.quoted())
		if !benignVar(a.name) {
			p.envOK = false
		}
		p.assignsExact = p.assignsExact && a.value.exact
	}
	for _, w := range cc.words {
		if !w.exact {
			break
		}
		p.nexact++
	}
	if p.Text == "" {
		p.Text = strings.TrimSpace(strings.Join(quoted, " ") + " " + joinWords(p.Words))
	}
	idx := c.add(p)
	part := func() *CommandPart { return &c.parts[idx] }
	if f.depth > maxDepth {
		part().Unresolved = true
		part().Reason = "commands nested too deeply to judge"
		return idx
	}

	if len(cc.words) == 0 {
		part().ReadOnly = p.envOK
		part().Reason = "sets shell variables"
		if !p.envOK {
			part().Reason = "sets variables that change how later commands run"
		}
		return idx
	}
	w0 := cc.words[0]
	if !w0.exact || w0.glob {
		part().Unresolved = true
		part().Reason = "the command name " + w0.s + " cannot be resolved before running"
		if g := guessWords(cc.words); len(g) > 0 && g[0].exact {
			name, _ := progName(g[0].s)
			if why := c.catastrophe(name, g[1:], sc, cc.in); why.cat != "" {
				part().Catastrophic = true
				part().Reason += "; it looks catastrophic: " + why.cat
			}
		}
		return idx
	}
	name, system := progName(w0.s)
	part().Name = name
	args := cc.words[1:]
	part().named, part().args, part().cwd = true, args, sc.cwd

	why := c.catastrophe(name, args, sc, cc.in)
	if g := guessWords(args); why.cat == "" && !allExact(args) && allExact(g) {
		why.cat = c.catastrophe(name, g, sc, cc.in).cat
	}
	// A recursive delete anywhere in the words (`watch rm -rf /`,
	// `ssh host rm -rf ~`) counts as well.
	for i := 0; why.cat == "" && i < len(args); i++ {
		if n, _ := progName(args[i].s); args[i].exact && n == "rm" {
			why.cat = c.catastrophe("rm", args[i+1:], sc, nil).cat
		}
	}
	if why.cat != "" {
		part().Catastrophic = true
		part().Reason = why.cat
	} else if why.unresolved != "" {
		part().Unresolved = true
		part().Reason = why.unresolved
	}

	var ro bool
	var reason string
	switch {
	case !system:
		reason = "runs " + w0.s + ", not a known system program"
	case c.funcs[w0.s]:
		ro, reason = true, "calls a function defined in this command (its body is judged on its own)"
	default:
		ro, reason = c.program(f.child(idx), sc, name, args, cc)
		if why := deviceRead(name, sc.cwd, args); ro && why != "" {
			ro, reason = false, why
		}
	}
	switch name {
	case "cd", "pushd":
		sc.cwd = c.cd(sc, args)
	case "popd":
		sc.cwd = ""
	}
	if ro && !p.envOK {
		ro, reason = false, "runs with environment variables that change what it does"
	}
	part().ReadOnly = ro
	if part().Reason == "" {
		part().Reason = reason
	}
	return idx
}

// guessWords re-splits words whose only unresolved expansion is $IFS (or
// a simple brace list) the way the shell would; other unresolved words
// stay unresolved.
func guessWords(ws []word) []word {
	var out []word
	for _, w := range ws {
		if w.exact {
			out = append(out, w)
			continue
		}
		for _, g := range strings.Fields(w.guess) {
			out = append(out, word{s: g, exact: !strings.Contains(g, "\x00"), guess: g})
		}
	}
	return out
}

// progName returns the program a command word names and whether it is
// the system's: a bare name, or an absolute path in a system bin
// directory (`./ls` is the workspace's, not the real ls).
func progName(s string) (string, bool) {
	if !strings.Contains(s, "/") {
		return s, true
	}
	switch path.Dir(s) {
	case "/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin",
		"/opt/homebrew/bin", "/run/current-system/sw/bin":
		return path.Base(s), true
	}
	return path.Base(s), false
}

// cd returns the directory after `cd args`, or "" if unknown.
func (c *classifier) cd(sc *scope, args []word) string {
	for len(args) > 0 && args[0].exact && (args[0].s == "-L" || args[0].s == "-P" || args[0].s == "-e" || args[0].s == "--") {
		args = args[1:]
	}
	if len(args) == 0 {
		return c.home
	}
	if !args[0].exact || args[0].s == "-" {
		return ""
	}
	p, ok := absPath(sc.cwd, args[0].s)
	if !ok {
		return ""
	}
	return p
}

// child judges words as a command run by part idx.
func (c *classifier) child(f frame, sc *scope, words []word, cc cmdCtx) {
	var assigns []assign
	for len(words) > 0 && words[0].exact && isAssignment(words[0].s) {
		name, val, _ := strings.Cut(words[0].s, "=")
		assigns = append(assigns, assign{name: name, value: lit(val)})
		words = words[1:]
	}
	c.simple(f, copyScope(sc), cmdCtx{assigns: assigns, words: words, stmt: cc.stmt, in: cc.in})
}

// isAssignment reports whether s reads as NAME=value.
func isAssignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// nested judges text as a command line run by part f.parent.
func (c *classifier) nested(f frame, sc *scope, text string) {
	f.nest++
	c.text(f, copyScope(sc), text)
}

// scanOpts walks the leading options of args. shortArg lists the short
// options that take a value, longArg the long ones (without "--"). visit
// gets each option ("-x" or "--name") with its value. It returns the index
// of the first operand; an unresolved word counts as an operand.
func scanOpts(args []word, shortArg string, longArg []string, visit func(opt, val string)) int {
	i := 0
	for i < len(args) {
		a := args[i]
		if !a.exact || a.s == "-" || !strings.HasPrefix(a.s, "-") {
			return i
		}
		i++
		if a.s == "--" {
			return i
		}
		if strings.HasPrefix(a.s, "--") {
			name, val, hasVal := strings.Cut(a.s[2:], "=")
			if !hasVal && contains(longArg, name) && i < len(args) {
				val = args[i].s
				i++
			}
			visit("--"+name, val)
			continue
		}
		cluster := a.s[1:]
		for j := 0; j < len(cluster); j++ {
			ch := cluster[j]
			if strings.IndexByte(shortArg, ch) < 0 {
				visit("-"+string(ch), "")
				continue
			}
			val := cluster[j+1:]
			if val == "" && i < len(args) {
				val = args[i].s
				i++
			}
			visit("-"+string(ch), val)
			break
		}
	}
	return i
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// program judges a program run with args: wrappers that run another
// command add that command as a child part; the rest are looked up in the
// read-only set. It returns whether the program itself is read-only.
func (c *classifier) program(f frame, sc *scope, name string, args []word, cc cmdCtx) (bool, string) {
	switch name {
	case "sudo", "doas":
		edit := false
		i := scanOpts(args, "ugpCDrtUThR", []string{"user", "group", "prompt", "close-from", "chdir", "role", "type", "other-user", "command-timeout", "host"}, func(o, _ string) {
			if o == "-e" || o == "--edit" || o == "-l" || o == "--list" {
				edit = true
			}
		})
		if !edit && i < len(args) {
			c.child(f, sc, args[i:], cc)
		}
		return false, name + " runs commands as another user"
	case "env":
		return c.env(f, sc, args, cc)
	case "command", "builtin":
		lookup := false
		i := scanOpts(args, "", nil, func(o, _ string) { lookup = lookup || o == "-v" || o == "-V" })
		if lookup {
			return true, "looks up a command"
		}
		if i < len(args) {
			c.child(f, sc, args[i:], cc)
		}
		return true, name + " runs the command that follows"
	case "nice", "nohup", "timeout", "stdbuf", "time", "exec", "ionice", "chrt", "setsid", "unbuffer":
		return c.wrapper(f, sc, name, args, cc)
	case "xargs":
		i := scanOpts(args, "IdEaLnPsle", []string{"arg-file", "delimiter", "eof", "replace", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"}, func(string, string) {})
		inner := append([]word(nil), args[i:]...)
		if len(inner) == 0 {
			inner = []word{lit("echo")}
		}
		xc := cc
		if cat := c.xargsFeed(inner, sc, cc.in); cat != "" {
			c.parts[f.parent].Catastrophic = true
			c.parts[f.parent].Reason = cat
		}
		c.child(f, sc, append(inner, word{s: "…", input: true, guess: "\x00"}), xc)
		return true, "xargs runs the command that follows with arguments from its input"
	case "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "busybox":
		return c.shell(f, sc, name, args, cc)
	case "eval":
		if !allExact(args) {
			c.parts[f.parent].Unresolved = true
			c.parts[f.parent].Reason = "eval of text that cannot be resolved before running"
			return false, ""
		}
		c.nested(f, sc, strings.Join(values(args), " "))
		return true, "eval runs the command that follows (judged on its own)"
	case "su":
		cmd, has := "", false
		scanOpts(args, "csgG", []string{"command", "shell", "group", "supp-group"}, func(o, v string) {
			if o == "-c" || o == "--command" {
				cmd, has = v, true
			}
		})
		if has {
			c.nested(f, sc, cmd)
		}
		return false, "su runs commands as another user"
	case "trap":
		if len(args) >= 2 && args[0].exact && !strings.HasPrefix(args[0].s, "-") {
			c.nested(f, sc, args[0].s)
		} else if len(args) >= 2 && !args[0].exact {
			c.parts[f.parent].Unresolved = true
			c.parts[f.parent].Reason = "trap with an action that cannot be resolved before running"
		}
		return true, "sets a signal handler (its command is judged on its own)"
	case "alias":
		for _, a := range args {
			if _, v, ok := strings.Cut(a.s, "="); ok && a.exact {
				c.nested(f, sc, v)
			} else if !a.exact {
				return false, "alias with a value that cannot be resolved before running"
			}
		}
		return true, "defines an alias (its command is judged on its own)"
	case "find":
		return c.find(f, sc, args, cc)
	case "source", ".":
		return false, "runs the commands of a file"
	}
	return c.readOnly(sc, name, args)
}

// env judges `env [options] [NAME=value…] [command]`.
func (c *classifier) env(f frame, sc *scope, args []word, cc cmdCtx) (bool, string) {
	split, hasSplit := "", false
	chdir := ""
	i := scanOpts(args, "uCSP", []string{"unset", "chdir", "split-string"}, func(o, v string) {
		switch o {
		case "-S", "--split-string":
			split, hasSplit = v, true
		case "-C", "--chdir":
			chdir = v
		}
	})
	rest := args[i:]
	var assigns []assign
	for len(rest) > 0 && rest[0].exact && isAssignment(rest[0].s) {
		n, v, _ := strings.Cut(rest[0].s, "=")
		assigns = append(assigns, assign{name: n, value: lit(v)})
		rest = rest[1:]
	}
	sub := copyScope(sc)
	if chdir != "" {
		sub.cwd, _ = absPath(sc.cwd, chdir)
	}
	if hasSplit {
		line := split
		if len(rest) > 0 {
			if !allExact(rest) {
				c.parts[f.parent].Unresolved = true
				c.parts[f.parent].Reason = "env -S with arguments that cannot be resolved before running"
				return false, ""
			}
			line += " " + joinWords(values(rest))
		}
		c.nested(f, sub, line)
		return envAssignsOK(assigns)
	}
	if len(rest) == 0 {
		return false, "env without a command prints the environment, which may hold secrets"
	}
	c.simple(f, sub, cmdCtx{assigns: assigns, words: rest, stmt: cc.stmt, in: cc.in})
	return envAssignsOK(assigns)
}

func envAssignsOK(as []assign) (bool, string) {
	for _, a := range as {
		if !benignVar(a.name) {
			return false, "env sets " + a.name + ", which changes how the command runs"
		}
	}
	return true, "env runs the command that follows"
}

// wrapper judges commands that run the command that follows them.
func (c *classifier) wrapper(f frame, sc *scope, name string, args []word, cc cmdCtx) (bool, string) {
	ro, reason := true, name+" runs the command that follows"
	var i int
	switch name {
	case "nice":
		// nice -n 5, nice -5, nice --adjustment=5
		for i < len(args) && args[i].exact && strings.HasPrefix(args[i].s, "-") && strings.Trim(args[i].s, "-0123456789") == "" && args[i].s != "--" {
			i++
		}
		i += scanOpts(args[i:], "n", []string{"adjustment"}, func(string, string) {})
	case "timeout":
		i = scanOpts(args, "sk", []string{"signal", "kill-after"}, func(string, string) {})
		if i < len(args) {
			i++ // the duration
		}
	case "stdbuf":
		i = scanOpts(args, "ioe", []string{"input", "output", "error"}, func(string, string) {})
	case "time":
		i = scanOpts(args, "of", []string{"output", "format"}, func(o, _ string) {
			if o == "-o" || o == "--output" {
				ro, reason = false, "time -o writes a file"
			}
		})
	case "exec":
		i = scanOpts(args, "a", nil, func(string, string) {})
	case "ionice":
		pid := false
		i = scanOpts(args, "cnpPu", []string{"class", "classdata", "pid", "pgid", "uid"}, func(o, _ string) {
			pid = pid || o == "-p" || o == "-P" || o == "-u" || o == "--pid" || o == "--pgid" || o == "--uid"
		})
		if pid {
			return false, "ionice changes other processes"
		}
	case "chrt":
		i = scanOpts(args, "T", nil, func(o, _ string) {
			if o == "-p" || o == "--pid" {
				ro, reason = false, "chrt changes other processes"
			}
		})
		if i < len(args) {
			i++ // the priority
		}
	default: // nohup, setsid, unbuffer
		i = scanOpts(args, "", nil, func(string, string) {})
	}
	if i < len(args) {
		c.child(f, sc, args[i:], cc)
	}
	return ro, reason
}

// shell judges `bash -c "…"`, `bash script`, `bash <<EOF` and friends.
func (c *classifier) shell(f frame, sc *scope, name string, args []word, cc cmdCtx) (bool, string) {
	if name == "busybox" {
		if len(args) == 0 || !args[0].exact || (args[0].s != "sh" && args[0].s != "ash") {
			return false, "busybox runs many programs"
		}
		args = args[1:]
	}
	cmode := false
	i := 0
	for i < len(args) {
		a := args[i]
		if !a.exact {
			break
		}
		if a.s == "--" {
			i++
			break
		}
		if a.s == "-o" || a.s == "+o" || a.s == "-O" || a.s == "+O" || a.s == "--rcfile" || a.s == "--init-file" {
			i += 2
			continue
		}
		if strings.HasPrefix(a.s, "-") || strings.HasPrefix(a.s, "+") {
			if !strings.HasPrefix(a.s, "--") && strings.Contains(a.s, "c") {
				cmode = true
			}
			i++
			continue
		}
		break
	}
	parent := &c.parts[f.parent]
	switch {
	case i < len(args) && cmode:
		if !args[i].exact {
			parent.Unresolved = true
			parent.Reason = name + " -c with a command that cannot be resolved before running"
			return false, ""
		}
		c.nested(f, sc, args[i].s)
		return true, name + " -c runs the command that follows (judged on its own)"
	case i < len(args):
		return false, name + " runs a script file"
	}
	if s, ok := hereScript(c.res(f, sc), cc.stmt); ok {
		c.nested(f, sc, s)
		return true, name + " runs the here-document (judged on its own)"
	}
	if cc.in != nil {
		if script, known := cc.in.script(); known {
			c.nested(f, sc, script)
			return true, name + " runs what the pipe feeds it (judged on its own)"
		}
		parent.Unresolved = true
		parent.Reason = name + " runs commands read from a pipe, which cannot be judged before running"
		return false, ""
	}
	if cc.stmt != nil && hasInputRedirect(cc.stmt) || cc.stmt == nil {
		parent.Unresolved = true
		parent.Reason = name + " runs commands read from its input, which cannot be judged before running"
		return false, ""
	}
	return false, name + " starts an interactive shell"
}

// hasInputRedirect reports whether st reads its standard input from a
// file.
func hasInputRedirect(st *syntax.Stmt) bool {
	for _, rd := range st.Redirs {
		if rd.Op == syntax.RdrIn && (rd.N == nil || rd.N.Value == "0") {
			return true
		}
	}
	return false
}
