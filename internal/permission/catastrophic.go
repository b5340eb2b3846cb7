package permission

import (
	"path"
	"path/filepath"
	"strings"
)

// CatastrophicChecks describes the hard checks that deny a command in
// every mode, whatever the rules say.
func CatastrophicChecks() []string {
	return []string{
		"recursive rm (-r, -R, --recursive, in any option order) of /, a top-level directory " +
			"(or /usr/*, /home/*, /etc/*, … ), the home directory or any directory above it, " +
			"or the workspace root or any directory above it; ~, $HOME, \"$HOME\", ., .., * and " +
			"all-matching globs such as /* and ~/.* count",
		"find with -delete, or -exec rm -r, on one of those directories (the workspace root only when there is no test such as -name)",
		"xargs rm -r fed by a command naming /, a top-level directory or the home directory",
		"mkfs*, mke2fs, wipefs",
		"dd of=/dev/… (other than /dev/null and the like); cp, mv, tee, shred, mkswap onto a disk device; " +
			"any redirection to /dev/sd*, /dev/nvme*, /dev/hd*, /dev/vd*, /dev/xvd*, /dev/mmcblk*, /dev/disk*, /dev/mapper/*",
		"chmod -R, chown -R, chgrp -R of /, a top-level directory or the home directory",
		"shutdown, reboot, halt, poweroff, init 0/6, telinit 0/6, systemctl poweroff/reboot/halt/kexec",
		"kill of process -1 (every process)",
		"fork bombs: a function that calls itself in the background or through a pipe (:(){ :|:& };:)",
	}
}

// verdict is what the catastrophe check found.
type verdict struct {
	cat        string // why the command is catastrophic, or ""
	unresolved string // why it might be and cannot be told, or ""
}

// catastrophe checks a program and its arguments against the list.
func (c *classifier) catastrophe(name string, args []word, sc *scope, in *pipeIn) verdict {
	switch {
	case name == "rm":
		return c.rm(args, sc, c.deleteTarget)
	case strings.HasPrefix(name, "mkfs") || name == "mke2fs" || name == "wipefs":
		return verdict{cat: name + " formats or wipes a file system"}
	case name == "dd":
		for _, a := range args {
			if dev, ok := strings.CutPrefix(a.s, "of="); ok && a.exact && strings.HasPrefix(filepath.Clean(dev), "/dev/") && !safeDevice(filepath.Clean(dev)) {
				return verdict{cat: "dd writes to the device " + dev}
			}
		}
	case name == "cp" || name == "mv" || name == "install":
		// The last operand is the destination.
		for i := len(args) - 1; i >= 0; i-- {
			if a := args[i]; !strings.HasPrefix(a.s, "-") {
				if a.exact && diskDevice(filepath.Clean(a.s)) {
					return verdict{cat: name + " writes to the disk device " + a.s}
				}
				break
			}
		}
	case name == "tee" || name == "shred" || name == "mkswap":
		for _, a := range args {
			if a.exact && diskDevice(filepath.Clean(a.s)) {
				return verdict{cat: name + " writes to the disk device " + a.s}
			}
		}
	case name == "chmod" || name == "chown" || name == "chgrp":
		recursive := false
		var targets []word
		for _, a := range args {
			switch {
			case a.exact && a.s == "--recursive":
				recursive = true
			case a.exact && strings.HasPrefix(a.s, "-") && !strings.HasPrefix(a.s, "--") && strings.Contains(a.s, "R"):
				recursive = true
			case a.exact && strings.HasPrefix(a.s, "-"):
			default:
				targets = append(targets, a)
			}
		}
		if recursive {
			for _, t := range targets {
				if p, ok := c.targetPath(t, sc); ok && c.systemTarget(p) {
					return verdict{cat: name + " -R of " + t.s}
				}
			}
		}
	case name == "shutdown" || name == "reboot" || name == "halt" || name == "poweroff":
		return verdict{cat: name + " stops or restarts the machine"}
	case name == "init" || name == "telinit":
		if len(args) > 0 && (args[0].s == "0" || args[0].s == "6") {
			return verdict{cat: name + " " + args[0].s + " stops or restarts the machine"}
		}
	case name == "systemctl":
		for _, a := range args {
			switch a.s {
			case "poweroff", "reboot", "halt", "kexec":
				return verdict{cat: "systemctl " + a.s + " stops or restarts the machine"}
			}
		}
	case name == "kill":
		for i, a := range args {
			if a.s == "-1" && (i > 0 || len(args) == 1) {
				return verdict{cat: "kill -1 signals every process"}
			}
		}
	}
	return verdict{}
}

// rm checks a recursive delete; isTarget says which resolved paths are
// catastrophic to delete.
func (c *classifier) rm(args []word, sc *scope, isTarget func(string) bool) verdict {
	recursive, maybe, endOpts := false, false, false
	var targets []word
	for _, a := range args {
		switch {
		case a.input:
			continue // xargs input: judged through what feeds it
		case !a.exact && !endOpts:
			maybe = true // might be -r
			targets = append(targets, a)
		case !endOpts && a.s == "--":
			endOpts = true
		case !endOpts && strings.HasPrefix(a.s, "--"):
			recursive = recursive || a.s == "--recursive"
		case !endOpts && strings.HasPrefix(a.s, "-") && len(a.s) > 1:
			recursive = recursive || strings.ContainsAny(a.s[1:], "rR")
		default:
			targets = append(targets, a)
		}
	}
	if !recursive && !maybe {
		return verdict{}
	}
	var v verdict
	for _, t := range targets {
		if !t.exact {
			if recursive && v.unresolved == "" {
				v.unresolved = "recursive delete of a path that cannot be resolved before running (" + t.s + ")"
			}
			continue
		}
		p, ok := c.targetPath(t, sc)
		if !ok {
			if v.unresolved == "" {
				v.unresolved = "recursive delete of a relative path from an unknown directory (" + t.s + ")"
			}
			continue
		}
		if isTarget(p) {
			if recursive {
				return verdict{cat: "recursive delete of " + describePath(t.s, p)}
			}
			v.unresolved = "may recursively delete " + describePath(t.s, p)
		}
	}
	return v
}

// describePath shows a path as written and, if different, as resolved.
func describePath(written, resolved string) string {
	if written == resolved {
		return written
	}
	return written + " (" + resolved + ")"
}

// targetPath resolves a delete target; an all-matching glob (*, .*,
// .[!.]*) stands for its directory.
func (c *classifier) targetPath(t word, sc *scope) (string, bool) {
	s := t.s
	if t.glob {
		s = globDir(s)
	}
	return absPath(sc.cwd, s)
}

// globDir returns the directory of a path whose last element is a glob
// that matches (almost) everything in it, or p itself.
func globDir(p string) string {
	trimmed := strings.TrimRight(p, "/")
	if trimmed == "" {
		return p
	}
	dir, last := path.Split(trimmed)
	for {
		open := strings.IndexByte(last, '[')
		end := strings.IndexByte(last, ']')
		if open < 0 || end < open {
			break
		}
		last = last[:open] + "?" + last[end+1:]
	}
	if strings.ContainsAny(last, "*?") && strings.Trim(last, "*?.") == "" {
		if dir == "" {
			return "."
		}
		return dir
	}
	return p
}

// depth counts the elements of a clean absolute path ("/" is 0).
func depth(p string) int {
	p = strings.Trim(filepath.ToSlash(p), "/")
	if p == "" {
		return 0
	}
	return strings.Count(p, "/") + 1
}

// systemTarget reports whether p is /, a top-level directory, a directory
// directly under one of the system ones, or the home directory or one
// above it.
func (c *classifier) systemTarget(p string) bool {
	switch depth(p) {
	case 0, 1:
		return true
	case 2:
		switch strings.SplitN(strings.Trim(filepath.ToSlash(p), "/"), "/", 2)[0] {
		case "usr", "home", "Users", "System", "Library", "Applications", "var", "etc", "opt",
			"boot", "lib", "lib32", "lib64", "bin", "sbin", "private", "snap", "srv", "root",
			"mnt", "media", "Volumes", "nix":
			return true
		}
	}
	return within(p, c.home)
}

// deleteTarget reports whether deleting p recursively is catastrophic: a
// system target, or the workspace root or a directory above it.
func (c *classifier) deleteTarget(p string) bool {
	return c.systemTarget(p) || within(p, c.workspace)
}

// safeDevice reports device files that are fine to write.
func safeDevice(p string) bool {
	switch p {
	case "/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty",
		"/dev/random", "/dev/urandom", "/dev/full":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/dev/pts/")
}

// diskDevice reports block devices and memory devices.
func diskDevice(p string) bool {
	for _, pre := range []string{"/dev/sd", "/dev/hd", "/dev/vd", "/dev/xvd", "/dev/nvme",
		"/dev/mmcblk", "/dev/disk", "/dev/rdisk", "/dev/mapper/", "/dev/dm-", "/dev/md",
		"/dev/mem", "/dev/kmem", "/dev/port", "/dev/loop"} {
		if strings.HasPrefix(p, pre) {
			return true
		}
	}
	return false
}

// xargsFeed checks `… | xargs rm -r`: catastrophic when a command upstream
// names a system target.
func (c *classifier) xargsFeed(inner []word, sc *scope, in *pipeIn) string {
	if len(inner) == 0 || in == nil {
		return ""
	}
	if n, _ := progName(inner[0].s); n != "rm" {
		return ""
	}
	if !rmRecursive(inner[1:]) {
		return ""
	}
	for _, ws := range in.words() {
		for _, w := range ws {
			if !w.exact || strings.HasPrefix(w.s, "-") {
				continue
			}
			if !filepath.IsAbs(w.s) {
				continue
			}
			if p, ok := c.targetPath(w, sc); ok && c.systemTarget(p) {
				return "xargs rm -r fed from a command naming " + w.s
			}
		}
	}
	return ""
}

// roughScan looks for a catastrophic command in text the parser rejected,
// so that a syntax error cannot turn a deny into an ask: it splits the
// text at shell operators, drops quotes and checks each piece.
func (c *classifier) roughScan(text string) string {
	squeezed := strings.Join(strings.Fields(text), "")
	if strings.Contains(squeezed, ":(){:|:&};:") {
		return "fork bomb"
	}
	r := strings.NewReplacer(`"`, "", "'", "", `\`, "", "${HOME}", c.home, "$HOME", c.home, "$(", " ", "${IFS}", " ", "$IFS", " ")
	pieces := strings.FieldsFunc(text, func(r rune) bool { return strings.ContainsRune(";&|()`\n{}", r) })
	for _, piece := range pieces {
		fields := strings.Fields(r.Replace(piece))
		if len(fields) == 0 {
			continue
		}
		ws := make([]word, len(fields))
		for i, f := range fields {
			if f == "~" || strings.HasPrefix(f, "~/") {
				f = c.home + f[1:]
			}
			ws[i] = lit(f)
			ws[i].glob = strings.ContainsAny(f, "*?[")
		}
		sc := &scope{cwd: c.workdir}
		for i := range ws {
			name, _ := progName(ws[i].s)
			if i > 0 && name != "rm" {
				continue
			}
			if v := c.catastrophe(name, ws[i+1:], sc, nil); v.cat != "" {
				return v.cat
			}
		}
	}
	return ""
}
