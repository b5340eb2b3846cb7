package permission

import (
	"fmt"
	"path/filepath"
	"strings"
)

// CheckUnknownWrite asks before a command that writes files whose names
// cannot be known before it runs while a deny rule keeps files from being
// edited: the rule could not be checked.
const CheckUnknownWrite = "writes a file that cannot be known before running"

// writtenPaths lists the files a command part writes, as far as its words
// tell: the target of an output redirection, the files a known writer
// (tee, cp, mv, sed -i, …) changes, made absolute against the part's
// directory. unknown lists, as written, the targets whose value cannot be
// known before the command runs. A part that writes nothing it names (a
// read-only one, a program not known to write) gives neither.
func (part *CommandPart) writtenPaths(home string) (paths, unknown []string) {
	add := func(w word) {
		switch {
		case w.input:
			unknown = append(unknown, "the arguments it reads from its input")
			return
		case !w.exact:
			unknown = append(unknown, w.s)
			return
		}
		s := w.s
		if s == "~" || strings.HasPrefix(s, "~/") {
			s = home + s[1:]
		}
		abs, ok := absPath(part.cwd, s)
		if !ok {
			unknown = append(unknown, s)
			return
		}
		paths = append(paths, abs)
		if w.glob {
			matches, _ := filepath.Glob(abs)
			paths = append(paths, matches...)
		}
	}
	if part.Kind == PartRedirect {
		switch {
		case part.Path != "":
			paths = append(paths, part.Path)
		case len(part.Words) == 2:
			unknown = append(unknown, part.Words[1])
		}
		return paths, unknown
	}
	if !part.named || part.ReadOnly {
		return nil, nil
	}
	operands, target := writerOperands(part.Name, part.args)
	switch part.Name {
	case "cp", "install", "ln", "rsync", "mv":
		// The destination, and the file each source becomes in it when
		// it is a directory. mv also takes its sources away.
		dest := target
		if dest == nil && len(operands) > 1 {
			dest, operands = &operands[len(operands)-1], operands[:len(operands)-1]
		}
		if dest == nil {
			return nil, nil
		}
		add(*dest)
		for _, src := range operands {
			if part.Name == "mv" {
				add(src)
			}
			if dest.exact && src.exact {
				add(lit(filepath.Join(dest.s, filepath.Base(src.s))))
			}
		}
	case "dd":
		for _, w := range part.args {
			if v, ok := strings.CutPrefix(w.s, "of="); ok {
				add(word{s: v, exact: w.exact, glob: w.glob})
			}
		}
	case "chmod", "chown", "chgrp":
		// The first operand is the mode or owner.
		if target == nil && len(operands) > 0 {
			operands = operands[1:]
		}
		for _, w := range operands {
			add(w)
		}
	case "tee", "touch", "truncate", "rm", "unlink", "mkdir", "rmdir", "shred", "sed", "perl", "patch":
		// sed and perl write only in place (-i), and are not read-only
		// then; their script operand names no file a rule would cover.
		for _, w := range operands {
			add(w)
		}
		if target != nil {
			add(*target)
		}
	}
	return paths, unknown
}

// writerOperands splits a known writer's arguments into its operands (the
// words that are not options) and the value of its -t/--target-directory
// option, if any.
func writerOperands(name string, args []word) (operands []word, target *word) {
	options := true
	for i := 0; i < len(args); i++ {
		w := args[i]
		if options && w.exact && w.s == "--" {
			options = false
			continue
		}
		if !options || !w.exact || !strings.HasPrefix(w.s, "-") || w.s == "-" {
			operands = append(operands, w)
			continue
		}
		switch {
		case name == "dd":
			operands = append(operands, w)
		case w.s == "-t" || w.s == "--target-directory":
			if i+1 < len(args) {
				target = &args[i+1]
				i++
			}
		case strings.HasPrefix(w.s, "--target-directory="):
			v := word{s: strings.TrimPrefix(w.s, "--target-directory="), exact: true}
			target = &v
		case (name == "sed" || name == "perl") && (w.s == "-e" || w.s == "-f" || w.s == "--expression" || w.s == "--file"):
			// The script or script file, not a file written.
			i++
		}
	}
	return operands, target
}

// judgeWrittenPaths denies a command part that writes a file an edit or
// write deny rule covers: edit_file(…) and write_file(…) rules hold for
// shell commands too. It returns nil when none does.
func (p *Policy) judgeWrittenPaths(part *CommandPart, req Request, quoted string) *PartDecision {
	paths, _ := part.writtenPaths(req.Home)
	for _, wp := range paths {
		for _, q := range []string{wp, resolvePath(wp)} {
			if r := p.match(Deny, func(r Rule) bool { return writeRule(r) && r.matchPath(q, req.Workspace, req.Home) }); r != nil {
				return &PartDecision{Action: Deny, Source: ruleSource(r),
					Reason: fmt.Sprintf("%s writes %s, which the rule %s (%s) denies editing",
						quoted, displayPath(wp, req.Workspace, req.Home), r.Rule.Text, r.Origin)}
			}
		}
	}
	return nil
}

// unknownWrite returns why a command part needs approval when edit or
// write deny rules exist but the part writes a file that cannot be known
// before it runs (the rules cannot be checked), or "" when that is not so.
func (p *Policy) unknownWrite(part *CommandPart, req Request, quoted string) string {
	if p.match(Deny, writeRule) == nil {
		return ""
	}
	if _, unknown := part.writtenPaths(req.Home); len(unknown) > 0 {
		return fmt.Sprintf("%s needs approval: it writes %s, which cannot be known before it runs, "+
			"and a deny rule keeps some files from being edited", quoted, unknown[0])
	}
	return ""
}

// writeRule reports whether r is a rule about changing files: a path rule
// of edit_file (which also covers write_file and apply_patch) or of
// write_file.
func writeRule(r Rule) bool {
	return r.kind == rulePath && (r.Tool == "edit_file" || r.Tool == "write_file")
}
