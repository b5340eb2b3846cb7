package permission

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// CheckSecretStore denies any tool the well-known secret stores (see
// SecretStores) unless an allow rule names them.
const CheckSecretStore = "secret store"

// CheckReadsBeyond asks before a read-only command that reads outside the
// workspace, searches a directory holding files a deny rule or a secret
// store covers, or names a file that cannot be known before it runs.
const CheckReadsBeyond = "reads beyond the workspace"

// noFileArgs are read-only programs whose arguments are not files they
// read (a path given to them is printed, tested or looked up, not read).
var noFileArgs = map[string]bool{
	"echo": true, "printf": true, "true": true, "false": true, ":": true, "test": true,
	"[": true, "pwd": true, "which": true, "type": true, "command": true, "basename": true,
	"dirname": true, "seq": true, "sleep": true, "exit": true, "return": true,
	"shift": true, "wait": true, "read": true, "tty": true, "locale": true,
	"getconf": true, "whoami": true, "id": true, "groups": true, "uname": true,
	"nproc": true, "arch": true, "uptime": true, "hostname": true, "date": true,
	"set": true, "cd": true, "pushd": true, "popd": true, "dirs": true, "realpath": true,
	"readlink": true,
}

// harmlessDevices are files outside the workspace that reading reveals
// nothing from.
var harmlessDevices = []string{"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty"}

// namedPaths lists the files a command part names: its arguments that are
// not options (and the values of --option=value arguments that look like
// paths), the part after the colon of git's REV:PATH, the matches of a
// glob, and the targets of its input redirections — all made absolute
// against the part's directory. unknown lists, as written, the arguments
// whose value cannot be known before the command runs (expansions, words
// xargs reads from its input, relative paths from an unknown directory).
// A program of noFileArgs names no files by its arguments.
func (part *CommandPart) namedPaths(home string) (paths, unknown []string) {
	add := func(s string) {
		if s == "" {
			return
		}
		if s == "~" || strings.HasPrefix(s, "~/") {
			s = home + s[1:]
		}
		abs, ok := absPath(part.cwd, s)
		if !ok {
			unknown = append(unknown, "the path "+s+" (from a directory not known)")
			return
		}
		paths = append(paths, abs)
	}
	word1 := func(w word) {
		switch {
		case w.input:
			unknown = append(unknown, "the arguments it reads from its input")
		case !w.exact:
			unknown = append(unknown, "its argument "+w.s)
		case w.glob:
			add(w.s)
			if abs, ok := absPath(part.cwd, w.s); ok {
				matches, _ := filepath.Glob(abs)
				paths = append(paths, matches...)
			}
		default:
			add(w.s)
		}
	}
	if part.named && !noFileArgs[part.Name] {
		for _, w := range part.args {
			s := w.s
			if w.exact && (s == "-" || s == "--") {
				continue
			}
			if w.exact && strings.HasPrefix(s, "-") {
				if _, v, ok := strings.Cut(s, "="); ok && looksLikePath(v) {
					add(v)
				}
				continue
			}
			if part.Name == "git" && w.exact && !strings.Contains(s, "://") {
				if i := strings.LastIndexByte(s, ':'); i >= 0 {
					add(s[i+1:])
				}
			}
			word1(w)
		}
	}
	for _, w := range part.inputs {
		word1(w)
	}
	return paths, unknown
}

// looksLikePath reports whether an option's value reads as a path.
func looksLikePath(v string) bool {
	return strings.ContainsRune(v, '/') || strings.HasPrefix(v, "~") || strings.HasPrefix(v, ".")
}

// readRule reports whether r is a rule about reading files: a path rule
// of read_file (which also covers list_dir, glob and grep).
func readRule(r Rule) bool { return r.kind == rulePath && r.Tool == "read_file" }

// judgeNamedPaths denies a command part that names a file a read deny
// rule covers, or a secret store no allow rule names. It returns nil when
// neither applies.
func (p *Policy) judgeNamedPaths(part *CommandPart, paths []string, req Request, quoted string) *PartDecision {
	for _, np := range paths {
		for _, q := range []string{np, resolvePath(np)} {
			if r := p.match(Deny, func(r Rule) bool { return readRule(r) && r.matchPath(q, req.Workspace, req.Home) }); r != nil {
				return &PartDecision{Action: Deny, Source: ruleSource(r),
					Reason: fmt.Sprintf("%s names %s, which the rule %s (%s) denies reading",
						quoted, displayPath(np, req.Workspace, req.Home), r.Rule.Text, r.Origin)}
			}
			store := p.secretStore(q, req.Home)
			if store == "" || p.commandNamesStore(part, q, store, req) {
				continue
			}
			return &PartDecision{Action: Deny, Source: Source{Kind: SourceHardCheck, Check: CheckSecretStore},
				Reason: fmt.Sprintf("%s names %s, in the secret store %s, which no tool may use unless "+
					"an allow rule names it (e.g. read_file(%s))", quoted, displayPath(np, req.Workspace, req.Home),
					displayPath(store, req.Workspace, req.Home), displayPath(q, req.Workspace, req.Home))}
		}
	}
	return nil
}

// commandNamesStore reports whether an allow rule names the secret store
// for this command: a read_file rule naming it (see namesStore), or a
// run_command rule matching the part whose own words name a path in it.
func (p *Policy) commandNamesStore(part *CommandPart, path, store string, req Request) bool {
	if p.namesStore("read_file", path, store, req.Workspace, req.Home) {
		return true
	}
	return p.match(Allow, func(r Rule) bool {
		if !r.matchTool(CommandTool) || r.kind == ruleTool || !r.matchPart(part, "", req.Home, false) {
			return false
		}
		return slices.ContainsFunc(expandHome(r.words, req.Home), func(w string) bool {
			return filepath.IsAbs(w) && withinFS(store, filepath.Clean(w))
		})
	}) != nil
}

// readsBeyond returns why a read-only command part cannot be allowed as
// read-only: it names a file outside the workspace, a file that cannot be
// known before it runs, runs outside the workspace, or searches a
// directory that holds files a read deny rule or a secret store covers.
// It returns "" when none of these holds.
func (p *Policy) readsBeyond(part *CommandPart, paths, unknown []string, req Request) string {
	if !part.named {
		return ""
	}
	if len(unknown) > 0 {
		return fmt.Sprintf("%s cannot be known before it runs, and may name a file outside the workspace", unknown[0])
	}
	if !noFileArgs[part.Name] && req.Workspace != "" {
		switch {
		case part.cwd == "":
			return "it runs in a directory that cannot be known before it runs"
		case req.rootOf(resolvePath(part.cwd)) == "":
			return "it runs in " + displayPath(part.cwd, req.Workspace, req.Home) + ", outside the workspace"
		}
	}
	for _, np := range paths {
		if slices.Contains(harmlessDevices, np) || strings.HasPrefix(np, "/dev/fd/") {
			continue
		}
		if req.Workspace != "" && (req.rootOf(np) == "" || req.rootOf(resolvePath(np)) == "") {
			return "it reads " + displayPath(np, req.Workspace, req.Home) + ", outside the workspace"
		}
	}
	if followsLinks(part) {
		return "it follows symbolic links while it searches, which may lead outside the workspace"
	}
	roots := searchRoots(part, paths)
	for _, root := range roots {
		if why := p.holdsHidden(root, req); why != "" {
			return "it searches " + displayPath(root, req.Workspace, req.Home) + ", which holds " + why
		}
	}
	return ""
}

// searchRoots returns the directories a part reads recursively: its path
// arguments, or its working directory when it has none, for rg, git grep,
// grep/egrep/fgrep with -r or -R, and find with -exec (whose commands read
// what it finds). Other programs read nothing recursively.
func searchRoots(part *CommandPart, paths []string) []string {
	args := part.Words[1:]
	switch part.Name {
	case "rg":
	case "find":
		if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "-exec") || strings.HasPrefix(a, "-ok") }) {
			return nil
		}
		// find's starting points come before its first option or
		// expression; without one it searches the working directory.
		if len(args) > 0 && !strings.HasPrefix(args[0], "-") && args[0] != "(" && args[0] != "!" {
			return paths
		}
		return []string{part.cwd}
	case "git":
		i := slices.Index(args, "grep")
		if i < 0 {
			return nil
		}
		args = args[i+1:]
	case "grep", "egrep", "fgrep":
		if !slices.ContainsFunc(args, grepRecursive) {
			return nil
		}
	default:
		return nil
	}
	// Without -e/-f the first operand is the pattern, not a path.
	operands := 0
	pattern := true
	for _, a := range args {
		switch {
		case a == "-e" || a == "-f" || strings.HasPrefix(a, "--regexp") || strings.HasPrefix(a, "--file"):
			pattern = false
		case !strings.HasPrefix(a, "-") || a == "-":
			operands++
		}
	}
	if pattern {
		operands--
	}
	if operands <= 0 {
		return []string{part.cwd}
	}
	return paths
}

// followsLinks reports a recursive search that follows every symbolic
// link it meets: rg -L/--follow, grep -R/--dereference-recursive.
func followsLinks(part *CommandPart) bool {
	short := func(a string, ch rune, values string) bool {
		if !strings.HasPrefix(a, "-") || strings.HasPrefix(a, "--") {
			return false
		}
		for _, c := range a[1:] {
			if c == ch {
				return true
			}
			if strings.ContainsRune(values, c) {
				return false
			}
		}
		return false
	}
	for _, a := range part.Words[1:] {
		switch part.Name {
		case "rg":
			if a == "--follow" || short(a, 'L', rgValueShorts) {
				return true
			}
		case "grep", "egrep", "fgrep":
			if a == "--dereference-recursive" || short(a, 'R', "ABCDdefm") {
				return true
			}
		}
	}
	return false
}

// grepRecursive reports a grep option that makes it search directories.
func grepRecursive(a string) bool {
	if a == "--recursive" || a == "--dereference-recursive" || a == "--directories=recurse" {
		return true
	}
	return strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") &&
		(strings.ContainsAny(strings.TrimLeft(a, "-"), "rR"))
}

// holdsHidden returns what in the directory dir a read deny rule or a
// secret store covers ("files the rule X denies reading"), or "".
func (p *Policy) holdsHidden(dir string, req Request) string {
	if dir == "" {
		return ""
	}
	dir = resolvePath(dir)
	for _, s := range p.resolvedStores(req.Home) {
		if withinFS(dir, s.path) || withinFS(dir, s.resolved) {
			return "the secret store " + displayPath(s.path, req.Workspace, req.Home)
		}
	}
	if r := p.match(Deny, func(r Rule) bool {
		if !readRule(r) {
			return false
		}
		lit := ruleAbsPattern(r.Pattern, req.Workspace, req.Home)
		if lit == "" {
			return false
		}
		scope := lit
		if i := strings.IndexAny(lit, "*?[{"); i >= 0 {
			scope = lit[:i]
			if !strings.HasSuffix(scope, "/") {
				scope = path.Dir(scope) // a partial name: sec* is in its directory
			}
		}
		scope = filepath.Clean(filepath.FromSlash(scope))
		return within(dir, scope) || within(scope, dir)
	}); r != nil {
		return "files the rule " + r.Rule.Text + " denies reading"
	}
	return ""
}

// ReadDenied reports whether tool may not read the file or directory at
// the canonical path (links resolved, as a walk of a canonical directory
// that does not follow links gives it): a deny rule for the tool matches
// it, or it lies in a secret store that no allow rule names. Tools that
// read many files — grep, glob, list_dir — call it for every entry to
// leave such files out of their results: a deny rule on a path must hold
// for a search of a directory that holds it, too. It touches no file.
func (p *Policy) ReadDenied(tool, path, workspace, home string) bool {
	if p == nil || path == "" {
		return false
	}
	if p.match(Deny, func(r Rule) bool {
		return r.kind == rulePath && r.matchTool(tool) && r.matchPath(path, workspace, home)
	}) != nil {
		return true
	}
	for _, s := range p.resolvedStores(home) {
		if (withinFS(s.resolved, path) || withinFS(s.path, path)) && !p.namesStore(tool, path, s.path, workspace, home) {
			return true
		}
	}
	return false
}
