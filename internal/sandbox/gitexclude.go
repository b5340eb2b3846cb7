package sandbox

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// maxUserExcludes bounds how much of the user's own excludes file is
// copied into a run's excludes file.
const maxUserExcludes = 1 << 20

// placeholderRepo is a git repository whose work tree holds placeholders
// of a run: its git directory and the placeholders' anchored patterns.
type placeholderRepo struct {
	workTree, gitDir string
	patterns         []string
}

// placeholderRepos groups the masks by the nearest git repository whose
// work tree holds them. Masks inside a git directory, and masks named .git,
// are left out: git never lists those. isMask tells the placeholders (of
// this run or another) that must not be taken for a repository's .git.
func placeholderRepos(masks []string, isMask func(string) bool) []*placeholderRepo {
	var repos []*placeholderRepo
	for _, m := range masks {
		if strings.Contains(m+string(filepath.Separator), string(filepath.Separator)+".git"+string(filepath.Separator)) {
			continue
		}
		workTree, gitDir := enclosingRepository(filepath.Dir(m), isMask)
		if gitDir == "" {
			continue
		}
		rel, err := filepath.Rel(workTree, m)
		if err != nil {
			continue
		}
		i := slices.IndexFunc(repos, func(r *placeholderRepo) bool { return r.gitDir == gitDir })
		if i < 0 {
			repos = append(repos, &placeholderRepo{workTree: workTree, gitDir: gitDir})
			i = len(repos) - 1
		}
		repos[i].patterns = append(repos[i].patterns, "/"+escapeExcludePattern(filepath.ToSlash(rel)))
	}
	return repos
}

// enclosingRepository returns the work tree and the canonical git
// directory of the nearest repository holding dir, or "" for none. A .git
// file (worktree, submodule) is followed to the directory it names.
func enclosingRepository(dir string, isMask func(string) bool) (workTree, gitDir string) {
	for {
		dotGit := filepath.Join(dir, ".git")
		if fi, err := os.Lstat(dotGit); err == nil && !isMask(dotGit) {
			switch {
			case fi.IsDir():
				gitDir = dotGit
			case fi.Mode().IsRegular():
				b, _ := os.ReadFile(dotGit)
				line, _, _ := strings.Cut(string(b), "\n")
				target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
				if !ok {
					return "", ""
				}
				target = strings.TrimSpace(target)
				if !filepath.IsAbs(target) {
					target = filepath.Join(dir, target)
				}
				gitDir = target
			default:
				return "", ""
			}
			if real, err := filepath.EvalSymlinks(gitDir); err == nil {
				gitDir = real
			}
			return dir, filepath.Clean(gitDir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ""
		}
		dir = parent
	}
}

// escapeExcludePattern makes a relative path a gitignore pattern that
// matches just that path.
func escapeExcludePattern(rel string) string {
	var b strings.Builder
	for i, r := range rel {
		switch {
		case strings.ContainsRune(`\*?[`, r), i == 0 && (r == '#' || r == '!'):
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	s := b.String()
	if t := strings.TrimRight(s, " "); t != s {
		// Trailing spaces are ignored unless escaped.
		s = t + strings.Repeat(`\ `, len(s)-len(t))
	}
	return s
}

// escapeGlob escapes wildmatch's special characters, for an includeIf
// gitdir: condition that must match one directory exactly.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\*?[`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// quoteConfigValue quotes s as a git configuration value.
func quoteConfigValue(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// userExcludesFile returns the excludes file git run in workTree with env
// would use: core.excludesFile as configured (system, global or the
// repository's own), else $XDG_CONFIG_HOME/git/ignore or
// $HOME/.config/git/ignore; "" when there is none to find.
func userExcludesFile(workTree string, env []string) string {
	if git, err := exec.LookPath("git"); err == nil {
		cmd := exec.Command(git, "config", "--path", "--get", "core.excludesFile")
		cmd.Dir, cmd.Env = workTree, env
		if out, err := cmd.Output(); err == nil {
			if v := strings.TrimRight(string(out), "\n"); v != "" {
				if !filepath.IsAbs(v) {
					v = filepath.Join(workTree, v)
				}
				return v
			}
		}
	}
	if x := getEnv(env, "XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "git", "ignore")
	}
	if h := getEnv(env, "HOME"); h != "" {
		return filepath.Join(h, ".config", "git", "ignore")
	}
	return ""
}

// getEnv returns name's value in env (the last one wins, as for exec).
func getEnv(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// hidePlaceholders writes, in a new directory under state, for each
// repository holding placeholders an excludes file (the user's own
// excludes, then the placeholders' anchored paths) and a configuration
// file naming it; it returns env with git configuration entries
// (GIT_CONFIG_COUNT, after any env already has) that include that file
// for that repository only (includeIf gitdir:), and the directory, to be
// bound read-only and removed after the run. With nothing to hide it
// returns env unchanged and dir "".
func hidePlaceholders(state string, masks []string, isMask func(string) bool, env []string) (_ []string, dir string, err error) {
	repos := placeholderRepos(masks, isMask)
	repos = slices.DeleteFunc(repos, func(r *placeholderRepo) bool { return strings.ContainsAny(r.gitDir, "\n\x00") })
	if len(repos) == 0 {
		return env, "", nil
	}
	count := 0
	if v := getEnv(env, "GIT_CONFIG_COUNT"); v != "" {
		if count, err = strconv.Atoi(v); err != nil || count < 0 {
			return env, "", nil // git refuses such an environment anyway
		}
	}
	dir, err = os.MkdirTemp(state, "git-")
	if err != nil {
		return env, "", err
	}
	orig := env
	env = slices.Clone(env)
	for i, r := range repos {
		var ex bytes.Buffer
		if f := userExcludesFile(r.workTree, orig); f != "" {
			if fh, err := os.Open(f); err == nil {
				io.Copy(&ex, io.LimitReader(fh, maxUserExcludes))
				fh.Close()
				if ex.Len() > 0 && !bytes.HasSuffix(ex.Bytes(), []byte("\n")) {
					ex.WriteByte('\n')
				}
			}
		}
		ex.WriteString("# mx-claw sandbox: placeholders at absent protected paths, for this command only\n")
		ex.WriteString(strings.Join(r.patterns, "\n") + "\n")
		exPath := filepath.Join(dir, fmt.Sprintf("exclude-%d", i))
		cfgPath := filepath.Join(dir, fmt.Sprintf("config-%d", i))
		if err := os.WriteFile(exPath, ex.Bytes(), 0o400); err != nil {
			os.RemoveAll(dir)
			return env, "", err
		}
		if err := os.WriteFile(cfgPath, []byte("[core]\n\texcludesFile = "+quoteConfigValue(exPath)+"\n"), 0o400); err != nil {
			os.RemoveAll(dir)
			return env, "", err
		}
		n := count + i
		env = setEnv(env, fmt.Sprintf("GIT_CONFIG_KEY_%d", n), "includeIf.gitdir:"+escapeGlob(r.gitDir)+".path")
		env = setEnv(env, fmt.Sprintf("GIT_CONFIG_VALUE_%d", n), cfgPath)
	}
	env = setEnv(env, "GIT_CONFIG_COUNT", strconv.Itoa(count+len(repos)))
	return env, dir, nil
}
