package permission

import (
	"fmt"
	"slices"
	"strings"
)

// ReadOnlyCommands returns the programs the classifier may judge
// read-only, each with the condition it checks. In default and
// acceptEdits mode a command line made only of read-only parts runs
// without asking. Anything else (including awk, env and printenv, which
// print secrets) is not read-only.
func ReadOnlyCommands() map[string]string {
	m := map[string]string{
		"set":      "with arguments (alone it prints every variable)",
		"hostname": "without arguments",
		"date":     "without -s/--set",
		"file":     "without -C/--compile",
		"tree":     "without -o or -R",
		"sort":     "without -o/--output or --compress-program",
		"uniq":     "with at most one file (a second one is written)",
		"find":     "without -delete, -ok, -okdir, -fprint*, -fls; -exec/-execdir commands are judged on their own",
		"rg":       "without --pre, --pre-glob, --hostname-bin or -z/--search-zip",
		"sed":      "without -i/--in-place or -f, and a script without w, W, e or s///w, s///e",
		"git": "status, diff, log, show, branch (listing), rev-parse, ls-files, ls-tree, blame, grep, " +
			"cat-file, rev-list, describe, shortlog, merge-base, show-ref, remote (listing), stash list/show; " +
			"not with -c, --git-dir, --work-tree, --exec-path, --output or grep -O, " +
			"and not in a repository whose own config sets a program to run (core.pager, core.fsmonitor, diff.external, …)",
		"go":      "list, vet, version, env (not -w/-u), doc; not with -toolexec, -vettool or -exec",
		"command": "with -v/-V",
	}
	for _, w := range alwaysReadOnly() {
		m[w] = "always"
	}
	for _, w := range []string{"sudo", "doas"} {
		m[w] = "never (the command it runs is judged on its own, too)"
	}
	for _, w := range []string{"nice", "nohup", "timeout", "stdbuf", "time", "exec", "env", "xargs", "builtin", "setsid", "ionice", "chrt", "unbuffer"} {
		m[w] = "as a wrapper: the command it runs is judged on its own"
	}
	m["env"] += "; never alone (it prints the environment)"
	m["time"] += "; not with -o"
	for _, w := range []string{"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "eval", "trap", "alias"} {
		m[w] = "when the command text is a literal (-c string, here-document, echo piped in), which is judged on its own"
	}
	return m
}

// alwaysReadOnly lists the programs that are read-only whatever their
// arguments.
func alwaysReadOnly() []string {
	return []string{
		"cat", "head", "tail", "wc", "ls", "stat", "pwd", "echo", "printf", "which",
		"type", "du", "df", "diff", "cmp", "cut", "tr", "basename", "dirname",
		"realpath", "readlink", "true", "false", ":", "test", "[", "grep", "egrep",
		"fgrep", "nl", "column", "comm", "join", "paste", "fold", "rev", "tac",
		"expand", "unexpand", "strings", "od", "hexdump", "md5sum", "sha1sum",
		"sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum",
		"whoami", "id", "groups", "uname", "nproc", "arch", "uptime", "seq", "sleep",
		"cd", "pushd", "popd", "dirs", "exit", "return", "shift", "wait", "read",
		"tty", "locale", "getconf", "base64", "numfmt",
	}
}

// strict reports whether every argument is resolved; commands with
// options that write or run programs are read-only only then.
func strict(args []word) (bool, string) {
	for _, a := range args {
		switch {
		case a.input:
			return false, "it gets arguments from its input, which cannot be judged before running"
		case !a.exact:
			return false, "an argument (" + a.s + ") cannot be resolved before running"
		}
	}
	return true, ""
}

// readOnly judges a program that runs no other command.
func (c *classifier) readOnly(sc *scope, name string, args []word) (bool, string) {
	const yes = "read-only command"
	if slices.Contains(alwaysReadOnly(), name) {
		return true, yes
	}
	switch name {
	case "env", "printenv":
		return false, name + " prints the environment, which may hold secrets"
	case "set":
		if len(args) == 0 {
			return false, "set without arguments prints every variable, which may hold secrets"
		}
		return true, yes
	case "hostname":
		if len(args) == 0 {
			return true, yes
		}
		return false, "hostname with arguments may change the host name"
	case "awk", "gawk", "mawk", "nawk":
		return false, "awk programs can run commands and write files"
	}
	if ok, why := strict(args); !ok {
		return false, why
	}
	flag := func(bad ...string) (bool, string) {
		for _, a := range args {
			for _, b := range bad {
				if a.s == b || strings.HasPrefix(b, "--") && strings.HasPrefix(a.s, b+"=") {
					return false, name + " " + b + " writes files or runs programs"
				}
			}
		}
		return true, yes
	}
	switch name {
	case "date":
		for _, a := range args {
			if strings.HasPrefix(a.s, "-s") || strings.HasPrefix(a.s, "--set") {
				return false, "date -s sets the clock"
			}
		}
		return true, yes
	case "file":
		return flag("-C", "--compile")
	case "tree":
		return flag("-o", "-R")
	case "rg":
		return rgReadOnly(args)
	case "sort":
		for _, a := range args {
			if strings.HasPrefix(a.s, "--output") || strings.HasPrefix(a.s, "--compress-program") ||
				!strings.HasPrefix(a.s, "--") && strings.HasPrefix(a.s, "-") && strings.Contains(a.s, "o") {
				return false, "sort -o writes a file"
			}
		}
		return true, yes
	case "uniq":
		n := 0
		for _, a := range args {
			if a.s == "-" || !strings.HasPrefix(a.s, "-") {
				n++
			}
		}
		if n > 1 {
			return false, "uniq writes its second file argument"
		}
		return true, yes
	case "sed":
		return sedReadOnly(args)
	case "git":
		return c.gitReadOnly(sc, args)
	case "go":
		return goReadOnly(args)
	}
	return false, fmt.Sprintf("%s is not in the read-only set", name)
}

// rgValueShorts are ripgrep's short options that take a value: in a
// bundle such as -nA3 the rest of the word after one of them is its value.
const rgValueShorts = "ABCEMTdefgjmrt"

// rgReadOnly judges ripgrep: --pre and --pre-glob run a program on the
// files searched, --hostname-bin runs one to learn the host name, and
// -z/--search-zip runs decompressors found on PATH (gzip, xz, …).
func rgReadOnly(args []word) (bool, string) {
	for _, a := range args {
		s := a.s
		if s == "--" {
			break
		}
		for _, long := range []string{"--pre", "--pre-glob", "--hostname-bin", "--search-zip"} {
			if s == long || strings.HasPrefix(s, long+"=") {
				return false, "rg " + long + " runs other programs"
			}
		}
		if strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "--") {
			for _, ch := range s[1:] {
				if ch == 'z' {
					return false, "rg -z runs decompression programs found on PATH"
				}
				if strings.ContainsRune(rgValueShorts, ch) {
					break
				}
			}
		}
	}
	return true, "read-only command"
}

// goReadOnly judges the go command.
func goReadOnly(args []word) (bool, string) {
	i := 0
	if len(args) > 1 && args[0].s == "-C" {
		i = 2
	}
	if i >= len(args) {
		return false, "go without a subcommand"
	}
	for _, a := range args[i+1:] {
		for _, bad := range []string{"-toolexec", "--toolexec", "-vettool", "--vettool", "-exec", "--exec"} {
			if a.s == bad || strings.HasPrefix(a.s, bad+"=") {
				return false, "go " + bad + " runs another program"
			}
		}
	}
	switch sub := args[i].s; sub {
	case "list", "vet", "version", "doc":
		return true, "read-only command"
	case "env":
		for _, a := range args[i+1:] {
			if a.s == "-w" || a.s == "-u" {
				return false, "go env " + a.s + " changes the go configuration"
			}
		}
		return true, "read-only command"
	default:
		return false, "go " + sub + " is not in the read-only set"
	}
}

// benignVar reports whether assigning name cannot change what a command
// does in a dangerous way: locale, terminal and build-target variables,
// and names with a lower-case letter (shell variables, not the environment
// programs read). PATH, LD_*, GIT_*, PAGER, BASH_ENV and the like are not.
func benignVar(name string) bool {
	switch name {
	case "TZ", "LANG", "LANGUAGE", "TERM", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR",
		"CLICOLOR", "CLICOLOR_FORCE", "COLORTERM", "TMPDIR", "CI", "DEBUG", "VERBOSE",
		"CGO_ENABLED", "GOOS", "GOARCH", "GOARM", "GOAMD64", "GO111MODULE", "GOMAXPROCS",
		"GOGC", "GOMEMLIMIT", "RUST_BACKTRACE", "RUST_LOG", "NODE_ENV",
		"PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE":
		return true
	}
	if strings.HasPrefix(name, "LC_") {
		return true
	}
	return strings.ToUpper(name) != name
}
