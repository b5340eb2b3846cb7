package permission

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
)

// protectedWrite returns why writing the path p inside the workspace
// always asks, even in acceptEdits mode, or "" if it need not. It looks at
// p as written and as resolved (symbolic links followed, like the write
// will), so a link such as `.mx-claw -> decoy` or `notes -> .envrc` does
// not turn a protected file into an ordinary one. Names are compared
// without regard to case on every system: a case-insensitive file system
// (macOS and Windows by default, a casefolded ext4 directory on Linux)
// writes .MX-CLAW/settings.json into .mx-claw, and asking once too often
// for such a name on a case-sensitive one costs little.
func protectedWrite(p, workspace string) string {
	for _, q := range []string{p, resolvePath(p)} {
		if !within(workspace, q) {
			continue
		}
		rel, err := filepath.Rel(workspace, q)
		if err != nil {
			return "it cannot be placed in the workspace"
		}
		if why := protectedRel(strings.ToLower(filepath.ToSlash(rel))); why != "" {
			return why
		}
	}
	return ""
}

// shellStartupFiles are the files shells run when they start or end.
var shellStartupFiles = map[string]bool{
	".bashrc": true, ".bash_profile": true, ".bash_login": true, ".bash_logout": true,
	".profile": true, ".zshrc": true, ".zshenv": true, ".zprofile": true, ".zlogin": true,
	".zlogout": true, ".kshrc": true, ".mkshrc": true, ".cshrc": true, ".tcshrc": true,
	".login": true, ".logout": true, ".xprofile": true, ".xinitrc": true, ".xsessionrc": true,
}

// protectedRel returns why writing rel (relative to the workspace, slash
// separated, lower case) asks, or "". These are mx-claw's and git's own
// files, and files that make other programs run code or follow
// instructions: an agent allowed to edit code should still not be able to
// plant a command that an editor, a shell, git or another agent runs on
// its own.
func protectedRel(rel string) string {
	comps := strings.Split(rel, "/")
	base := comps[len(comps)-1]
	for i, c := range comps {
		dir := i < len(comps)-1
		switch {
		case c == ".git":
			return "it is inside .git, git's own files (its config and hooks run programs)"
		case c == ProjectDir:
			return "it is mx-claw's project configuration (.mx-claw), which sets permissions and hooks"
		case c == ".claude":
			return "it is Claude Code's project configuration (.claude), which can run hooks and commands"
		case c == ".idea":
			return "it is JetBrains IDE configuration (.idea), which can run tools when the project opens"
		case c == ".husky" && dir:
			return "it is a git hook (.husky), which runs on commit"
		case c == ".vscode" && dir && i == len(comps)-2:
			switch base {
			case "settings.json", "tasks.json", "launch.json":
				return "it is VS Code configuration (.vscode/" + base + "), which can run programs when the folder opens"
			}
		case c == "fish" && dir && i > 0 && comps[i-1] == ".config":
			return "it is fish shell configuration, which a shell runs when it starts"
		}
	}
	switch {
	case base == ".mcp.json":
		return "it is an MCP server list (.mcp.json): agents start the commands it names"
	case base == ".envrc":
		return "it is a direnv file (.envrc), which a shell with direnv runs when it enters the directory"
	case shellStartupFiles[base]:
		return "it is a shell startup file (" + base + "), which a shell runs when it starts"
	case base == ".gitconfig":
		return "it is git configuration (.gitconfig), which can make git run programs"
	case base == ".gitmodules":
		return "it is .gitmodules, which tells git which repositories to fetch and check out"
	case base == ".pre-commit-config.yaml":
		return "it is pre-commit configuration, whose hooks run on commit"
	case base == "agents.md" || base == "claude.md":
		return "it is agent instructions (" + base + "), which mx-claw and other agents follow"
	case strings.HasSuffix(base, ".code-workspace"):
		return "it is a VS Code workspace file, which can run tasks and set programs to run"
	}
	return ""
}

// maxLinkHops bounds the symbolic links resolvePath follows.
const maxLinkHops = 40

// resolvePath returns the clean absolute path p with every symbolic link
// resolved, like `realpath -m`: components that do not exist are kept as
// they are, and a dangling link is followed to where it points (as
// creating a file through it would). On any other error, or too many
// links, the path resolved so far is joined with the rest.
func resolvePath(p string) string {
	if p == "" || !filepath.IsAbs(p) {
		return p
	}
	vol := filepath.VolumeName(p)
	resolved := vol + string(filepath.Separator)
	rest := strings.FieldsFunc(p[len(vol):], func(r rune) bool { return r == '/' || r == filepath.Separator })
	hops := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
				return filepath.Join(append([]string{resolved}, rest...)...)
			}
			continue
		}
		link, err := os.Readlink(next)
		if hops++; err != nil || hops > maxLinkHops {
			return filepath.Join(append([]string{next}, rest...)...)
		}
		if filepath.IsAbs(link) {
			v := filepath.VolumeName(link)
			resolved, link = v+string(filepath.Separator), link[len(v):]
		}
		rest = append(strings.FieldsFunc(link, func(r rune) bool { return r == '/' || r == filepath.Separator }), rest...)
	}
	return resolved
}

// foldCase reports whether paths are compared without regard to case:
// on macOS and Windows, whose file systems are case-insensitive by
// default.
var foldCase = runtime.GOOS == "darwin" || runtime.GOOS == "windows"

// withinFS reports whether the clean absolute path p is base or beneath
// it, without regard to case where the file system is case-insensitive.
// It compares strings only, as it runs for every file a search meets.
func withinFS(base, p string) bool {
	if base == "" || len(p) < len(base) {
		return false
	}
	head := p[:len(base)]
	if head != base && !(foldCase && strings.EqualFold(head, base)) {
		return false
	}
	return len(p) == len(base) || p[len(base)] == filepath.Separator || strings.HasSuffix(base, string(filepath.Separator))
}

// homeSecretStores are the well-known secret stores under the user's home
// directory: SSH keys, cloud and registry credentials, GnuPG, the GitHub
// CLI's token, netrc and git's plain-text credentials.
var homeSecretStores = []string{
	".ssh", ".aws", ".gnupg", ".config/gh", ".docker/config.json", ".netrc",
	".git-credentials", ".config/git/credentials", ".kube/config", ".config/gcloud",
	".azure", ".pypirc", ".npmrc", ".cargo/credentials", ".cargo/credentials.toml",
}

// appSecretFiles are the files of the mx-claw home that hold secrets or
// every session's text: the key file store, the local server's token, the
// config (which never should, but may by hand, hold a key) and the
// database with its journal files.
var appSecretFiles = []string{
	"secrets.json", "secrets.key", "server.json", "config.json",
	"mx-claw.db", "mx-claw.db-wal", "mx-claw.db-shm",
}

// SecretStores returns the well-known secret stores, as absolute paths:
// those under the user's home directory home and the secret files of the
// mx-claw home appHome (either may be empty). Every tool is denied them
// unless an allow rule names them (see the package doc).
func SecretStores(home, appHome string) []string {
	var out []string
	if home != "" {
		for _, s := range homeSecretStores {
			out = append(out, filepath.Join(home, filepath.FromSlash(s)))
		}
	}
	if appHome != "" {
		for _, s := range appSecretFiles {
			out = append(out, filepath.Join(appHome, s))
		}
	}
	return out
}

// secretStore returns the secret store holding the absolute path p (as
// given, or as its links resolve), or "".
func (p *Policy) secretStore(path, home string) string {
	if path == "" {
		return ""
	}
	real := resolvePath(path)
	for _, s := range p.resolvedStores(home) {
		if withinFS(s.resolved, path) || withinFS(s.resolved, real) || withinFS(s.path, path) || withinFS(s.path, real) {
			return s.path
		}
	}
	return ""
}

// store is a secret store as named and as its links resolve.
type store struct{ path, resolved string }

// storeCache remembers the resolved secret stores by home directory, so a
// command with many arguments resolves them once.
type storeCache struct {
	mu     sync.Mutex
	byHome map[string][]store
}

// resolvedStores returns the secret stores for home, each with its
// resolved form.
func (p *Policy) resolvedStores(home string) []store {
	var c *storeCache
	if p != nil {
		c = p.stores
	}
	if c != nil {
		c.mu.Lock()
		s, ok := c.byHome[home]
		c.mu.Unlock()
		if ok {
			return s
		}
	}
	var out []store
	for _, s := range SecretStores(home, p.appHome()) {
		out = append(out, store{path: s, resolved: resolvePath(s)})
	}
	if c != nil {
		c.mu.Lock()
		if c.byHome == nil || len(c.byHome) > 16 {
			c.byHome = map[string][]store{}
		}
		c.byHome[home] = out
		c.mu.Unlock()
	}
	return out
}

// appHome returns the mx-claw home the policy protects, "" if none.
func (p *Policy) appHome() string {
	if p == nil {
		return ""
	}
	return p.home
}

// namesStore reports whether an allow rule for tool that matches path
// explicitly names the secret store: its pattern, up to the first glob
// character, lies inside the store. `read_file(~/.ssh/id_ed25519.pub)` and
// `read_file(~/.ssh/**)` name ~/.ssh; `read_file(~/**)` and a rule for
// the whole tool do not.
func (p *Policy) namesStore(tool, path, store, workspace, home string) bool {
	return p.match(Allow, func(r Rule) bool {
		if !r.matchTool(tool) || r.kind != rulePath || !r.matchPath(path, workspace, home) {
			return false
		}
		lit := ruleAbsPattern(r.Pattern, workspace, home)
		if i := strings.IndexAny(lit, "*?[{"); i >= 0 {
			lit = lit[:i]
		}
		lit = strings.TrimSuffix(filepath.FromSlash(lit), string(filepath.Separator))
		return lit != "" && withinFS(store, filepath.Clean(lit))
	}) != nil
}

// ruleAbsPattern returns a path rule's pattern made absolute (slash
// separated), or "" if it is relative and there is no workspace.
func ruleAbsPattern(pat, workspace, home string) string {
	pat = filepath.ToSlash(pat)
	switch {
	case pat == "~" || strings.HasPrefix(pat, "~/"):
		if home == "" {
			return ""
		}
		return filepath.ToSlash(home) + pat[1:]
	case strings.HasPrefix(pat, "/"):
		return pat
	case workspace == "":
		return ""
	}
	return strings.TrimRight(filepath.ToSlash(workspace), "/") + "/" + strings.TrimPrefix(pat, "./")
}
