package sessionio

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Env is what DefaultPath reads of the environment.
type Env struct {
	// Home is the user's home directory.
	Home string
	// Getenv reads a variable (CLAUDE_CONFIG_DIR, CODEX_HOME,
	// XDG_DATA_HOME, GEMINI_CLI_HOME).
	Getenv func(string) string
}

// DefaultPath returns where source keeps its sessions on this machine.
func DefaultPath(source string, env Env) (string, error) {
	get := env.Getenv
	if get == nil {
		get = func(string) string { return "" }
	}
	switch source {
	case SourceClaude:
		if d := get("CLAUDE_CONFIG_DIR"); d != "" {
			return filepath.Join(d, "projects"), nil
		}
		return filepath.Join(env.Home, ".claude", "projects"), nil
	case SourceCodex:
		if d := get("CODEX_HOME"); d != "" {
			return filepath.Join(d, "sessions"), nil
		}
		return filepath.Join(env.Home, ".codex", "sessions"), nil
	case SourceOpencode:
		if d := get("XDG_DATA_HOME"); d != "" {
			return filepath.Join(d, "opencode"), nil
		}
		return filepath.Join(env.Home, ".local", "share", "opencode"), nil
	case SourceGemini:
		if d := get("GEMINI_CLI_HOME"); d != "" {
			return filepath.Join(d, ".gemini", "tmp"), nil
		}
		return filepath.Join(env.Home, ".gemini", "tmp"), nil
	case SourceMxClaw:
		return "", fmt.Errorf("importing an mx-claw export needs its file (from `mx-claw sessions export ID`)")
	}
	return "", fmt.Errorf("%w %q: use one of %s", ErrUnknownSource, source, strings.Join(Sources(), ", "))
}

// Failure is a file Read could not read; the others are still read.
type Failure struct {
	Path string
	Err  error
}

// Read reads the sessions source keeps at path (a file, or a directory of
// them). A file that cannot be read is reported in failures and the rest
// are read; the error is for a path that cannot be read at all.
func Read(source, path string) (sessions []*Session, failures []Failure, err error) {
	if _, err := os.Stat(path); err != nil {
		return nil, nil, fmt.Errorf("%s sessions: %w", source, err)
	}
	var files []string
	var read func(string) (*Session, error)
	switch source {
	case SourceClaude:
		files, err = claudeFiles(path)
		read = readClaude
	case SourceCodex:
		files, err = codexFiles(path)
		read = readCodex
	case SourceGemini:
		files, err = geminiFiles(path)
		read = readGemini
	case SourceMxClaw:
		files, err = listFiles(path, func(name string) bool { return strings.HasSuffix(name, ".jsonl") })
		read = readMxClaw
	case SourceOpencode:
		list, err := readOpencode(path)
		return list, nil, err
	default:
		return nil, nil, fmt.Errorf("%w %q: use one of %s", ErrUnknownSource, source, strings.Join(Sources(), ", "))
	}
	if err != nil {
		return nil, nil, err
	}
	for _, f := range files {
		s, err := read(f)
		if err != nil {
			failures = append(failures, Failure{Path: f, Err: err})
			continue
		}
		sessions = append(sessions, s)
	}
	return sessions, failures, nil
}
