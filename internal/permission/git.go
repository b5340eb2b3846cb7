package permission

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mx-claw/mx-claw/internal/safefile"
)

// gitVerdict is what the repository around a directory says about running
// git there: "" if its config sets no program to run, else why not.
type gitVerdict struct{ risk string }

// gitReadOnly judges a git command run in sc.cwd.
func (c *classifier) gitReadOnly(sc *scope, args []word) (bool, string) {
	dir := sc.cwd
	i := 0
	for i < len(args) && strings.HasPrefix(args[i].s, "-") {
		switch a := args[i].s; {
		case a == "-C" && i+1 < len(args):
			if dir != "" {
				dir, _ = absPath(dir, args[i+1].s)
			}
			i += 2
			continue
		case a == "--no-pager" || a == "-P" || a == "--no-optional-locks" || a == "-p" ||
			a == "--paginate" || a == "--literal-pathspecs" || a == "--no-replace-objects":
			i++
			continue
		case a == "-c" || strings.HasPrefix(a, "--config-env"):
			return false, "git -c can set a program to run"
		default:
			return false, "git option " + a + " is not known to be safe"
		}
	}
	if i >= len(args) {
		return false, "git without a subcommand"
	}
	sub, rest := args[i].s, args[i+1:]
	has := func(prefixes ...string) string {
		for _, a := range rest {
			for _, p := range prefixes {
				if a.s == p || strings.HasPrefix(p, "--") && strings.HasPrefix(a.s, p+"=") ||
					!strings.HasPrefix(p, "--") && len(p) == 2 && strings.HasPrefix(a.s, p) && !strings.HasPrefix(a.s, "--") {
					return a.s
				}
			}
		}
		return ""
	}
	switch sub {
	case "status", "rev-parse", "ls-files", "ls-tree", "blame", "cat-file", "rev-list",
		"describe", "shortlog", "merge-base", "show-ref":
	case "diff", "log", "show":
		if a := has("--output"); a != "" {
			return false, "git " + sub + " " + a + " writes a file"
		}
	case "grep":
		if a := has("-O", "--open-files-in-pager"); a != "" {
			return false, "git grep " + a + " runs a program"
		}
	case "branch":
		if !gitBranchLists(rest) {
			return false, "git branch with these arguments changes branches"
		}
	case "remote":
		for _, a := range rest {
			if a.s != "-v" && a.s != "--verbose" {
				return false, "git remote with arguments may change remotes"
			}
		}
	case "stash":
		if len(rest) == 0 || rest[0].s != "list" && rest[0].s != "show" {
			return false, "git stash changes the stash"
		}
	default:
		return false, "git " + sub + " is not in the read-only set"
	}
	if dir == "" {
		return false, "git runs in a directory that cannot be resolved before running"
	}
	if v := c.gitRepoRisk(dir); v.risk != "" {
		return false, v.risk
	}
	return true, "read-only command"
}

// gitBranchLists reports whether `git branch args` only lists branches.
func gitBranchLists(args []word) bool {
	list := false
	operands := 0
	for i := 0; i < len(args); i++ {
		a := args[i].s
		switch {
		case a == "-l" || a == "--list":
			list = true
		case a == "-a" || a == "--all" || a == "-r" || a == "--remotes" || a == "-v" ||
			a == "-vv" || a == "--verbose" || a == "--show-current" || a == "--color" ||
			a == "--no-color" || a == "-i" || a == "--ignore-case" || a == "--omit-empty" ||
			strings.HasPrefix(a, "--sort=") || strings.HasPrefix(a, "--format=") ||
			strings.HasPrefix(a, "--color=") || strings.HasPrefix(a, "--column") ||
			a == "--no-column" || strings.HasPrefix(a, "--abbrev"):
		case a == "--contains" || a == "--no-contains" || a == "--merged" ||
			a == "--no-merged" || a == "--points-at" || a == "--sort" || a == "--format":
			i++ // takes a value
		case strings.HasPrefix(a, "--contains=") || strings.HasPrefix(a, "--no-contains=") ||
			strings.HasPrefix(a, "--merged=") || strings.HasPrefix(a, "--no-merged=") ||
			strings.HasPrefix(a, "--points-at="):
		case strings.HasPrefix(a, "-"):
			return false
		default:
			operands++
		}
	}
	return operands == 0 || list
}

// gitRepoRisk finds the repository git would use from dir and reads its
// own config files for settings that make read-only commands run programs.
func (c *classifier) gitRepoRisk(dir string) gitVerdict {
	if v, ok := c.gitCache[dir]; ok {
		return v
	}
	v := gitVerdict{risk: gitConfigRisk(dir)}
	c.gitCache[dir] = v
	return v
}

// gitConfigRisk returns why running git in dir is not read-only, or "".
func gitConfigRisk(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		fi, err := os.Lstat(dotgit)
		switch {
		case err == nil && fi.IsDir():
			return configFilesRisk(filepath.Join(dotgit, "config"))
		case err == nil:
			gitdir, err := readGitdirFile(dotgit)
			if err != nil {
				return "cannot read " + dotgit + ": " + err.Error()
			}
			files := []string{filepath.Join(gitdir, "config"), filepath.Join(gitdir, "config.worktree")}
			if b, err := safefile.ReadFile(filepath.Join(gitdir, "commondir"), safefile.DefaultMax); err == nil {
				common := strings.TrimSpace(string(b))
				if !filepath.IsAbs(common) {
					common = filepath.Join(gitdir, common)
				}
				files = append(files, filepath.Join(common, "config"), filepath.Join(common, "config.worktree"))
			}
			return configFilesRisk(files...)
		case !errors.Is(err, fs.ErrNotExist):
			return "cannot inspect " + dotgit + ": " + err.Error()
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// readGitdirFile reads a ".git" file ("gitdir: <path>").
func readGitdirFile(name string) (string, error) {
	b, err := safefile.ReadFile(name, safefile.DefaultMax)
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	gd, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return "", errors.New("not a gitdir file")
	}
	gd = strings.TrimSpace(gd)
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(filepath.Dir(name), gd)
	}
	return filepath.Clean(gd), nil
}

// configFilesRisk checks git config files; a missing one is fine.
func configFilesRisk(names ...string) string {
	for _, n := range names {
		b, err := safefile.ReadFile(n, safefile.DefaultMax)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "cannot read " + n + ": " + err.Error()
		}
		if key := GitConfigRisk(string(b)); key != "" {
			return "the repository's config (" + n + ") sets " + key + ", which can run a program"
		}
	}
	return ""
}

// GitConfigRisk returns the first setting in the text of a git config
// file that makes git run a program or read another config file during
// commands that are otherwise read-only, or "" if there is none. It looks
// for core.fsmonitor, core.pager, core.sshCommand, core.hooksPath,
// core.editor, core.askPass, core.gitProxy, core.alternateRefsCommand,
// diff.external, diff.<driver>.textconv/command, filter.<driver>.*,
// merge.<driver>.driver, pager.*, credential.helper, gpg.program,
// gpg.<format>.program, sequence.editor, interactive.diffFilter,
// uploadpack.packObjectsHook, include.path and includeIf.*.path.
func GitConfigRisk(text string) string {
	section, sub := "", ""
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return "a malformed section header"
			}
			head := strings.TrimSpace(line[1:end])
			section, sub = head, ""
			if name, rest, ok := strings.Cut(head, " "); ok {
				section, sub = name, strings.Trim(strings.TrimSpace(rest), `"`)
			} else if name, rest, ok := strings.Cut(head, "."); ok {
				section, sub = name, rest
			}
			section = strings.ToLower(section)
			line = strings.TrimSpace(line[end+1:])
			if line == "" || line[0] == '#' || line[0] == ';' {
				continue
			}
		}
		key, _, _ := strings.Cut(line, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		if risky(section, sub, key) {
			full := section + "."
			if sub != "" {
				full += sub + "."
			}
			return full + key
		}
	}
	if sc.Err() != nil {
		return "a line too long to read"
	}
	return ""
}

// risky reports whether section[.sub].key names a program or includes
// another file.
func risky(section, sub, key string) bool {
	switch section {
	case "core":
		switch key {
		case "fsmonitor", "pager", "sshcommand", "hookspath", "editor", "askpass",
			"gitproxy", "alternaterefscommand":
			return true
		}
	case "diff":
		return sub == "" && key == "external" || sub != "" && (key == "textconv" || key == "command")
	case "filter", "pager", "include", "includeif":
		return true
	case "merge":
		return sub != "" && key == "driver"
	case "credential":
		return key == "helper"
	case "gpg":
		return key == "program"
	case "sequence":
		return key == "editor"
	case "interactive":
		return key == "difffilter"
	case "uploadpack":
		return key == "packobjectshook"
	}
	return false
}
