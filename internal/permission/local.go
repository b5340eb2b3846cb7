package permission

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mx-claw/mx-claw/internal/safefile"
)

// The project's local settings, <workspace>/.mx-claw/settings.local.json,
// are the user's own settings for one project, kept out of git (as Claude
// Code's .claude/settings.local.json). "Always" approvals are written there
// as allow rules, so the user can read, edit and remove them.
//
// A repository could ship such a file, so its allow rules apply only when
// the workspace is trusted, or when the user granted the same rule in
// mx-claw (Options.LocalGranted); its deny and ask rules always apply.

// LocalSettingsPath returns the local settings file of a workspace.
func LocalSettingsPath(workspace string) string {
	return filepath.Join(workspace, ProjectDir, localSettingsName)
}

// localSettingsName is the local settings file's name in ProjectDir.
const localSettingsName = "settings.local.json"

// LoadLocalSettings reads a workspace's settings.local.json as
// LoadProjectSettings reads its settings.json: a symbolic link as
// .mx-claw or as the file is refused, and until the project is trusted
// only what tightens is parsed (its allow rules are kept unparsed in
// UnparsedAllow, for the grants check of NewPolicy).
func LoadLocalSettings(workspace string, trusted bool) (*Settings, error) {
	path := LocalSettingsPath(workspace)
	data, err := safefile.ReadInTree(workspace, filepath.Join(ProjectDir, localSettingsName), safefile.DefaultMax)
	var le *safefile.LinkError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &Settings{Path: path, TightenOnly: !trusted}, nil
	case errors.As(err, &le):
		return nil, &SettingsError{Path: path, Err: fmt.Errorf("%w: project configuration must be a real "+
			"file inside the project, and %s is a symbolic link (to %s); replace the link with the "+
			"directory or file itself, or remove it", ErrSymlinkedConfig, le.Path, le.Target)}
	case err != nil:
		return nil, fmt.Errorf("read settings: %w", err)
	}
	if trusted {
		return ParseSettings(path, data)
	}
	return parseTightening(path, data)
}

// AddLocalAllow adds rule to permissions.allow of the workspace's local
// settings file, creating it if needed, and keeps the file out of git. The
// other keys of the file are kept. A rule already there is not added
// twice. The file is replaced atomically; a malformed file is an error and
// is left alone.
func AddLocalAllow(workspace, rule string) error {
	if _, err := ParseRule(rule); err != nil {
		return err
	}
	path := LocalSettingsPath(workspace)
	data, err := safefile.ReadInTree(workspace, filepath.Join(ProjectDir, localSettingsName), safefile.DefaultMax)
	var le *safefile.LinkError
	switch {
	case errors.As(err, &le):
		return &SettingsError{Path: path, Err: fmt.Errorf("%w: not writing through the symbolic link %s (to %s)",
			ErrSymlinkedConfig, le.Path, le.Target)}
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("read %s: %w", path, err)
	}
	top := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(data)) > 0 {
		if _, err := ParseSettings(path, data); err != nil {
			return err
		}
		if err := json.Unmarshal(data, &top); err != nil {
			return &SettingsError{Path: path, Err: err}
		}
	}
	perms := map[string]json.RawMessage{}
	if raw, ok := top["permissions"]; ok && string(bytes.TrimSpace(raw)) != "null" {
		if err := json.Unmarshal(raw, &perms); err != nil {
			return &SettingsError{Path: path, Field: "permissions", Err: err}
		}
	}
	var allow []string
	if raw, ok := perms["allow"]; ok {
		if err := json.Unmarshal(raw, &allow); err != nil {
			return &SettingsError{Path: path, Field: "permissions.allow", Err: err}
		}
	}
	if slices.Contains(allow, rule) {
		return nil
	}
	allow = append(allow, rule)
	if perms["allow"], err = json.Marshal(allow); err != nil {
		return err
	}
	if top["permissions"], err = json.Marshal(perms); err != nil {
		return err
	}
	out, err := json.MarshalIndent(top, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if fi, err := os.Lstat(dir); err != nil || fi.Mode()&os.ModeSymlink != 0 {
		return &SettingsError{Path: path, Err: fmt.Errorf("%w: %s is not a directory of the project", ErrSymlinkedConfig, dir)}
	}
	if err := keepOutOfGit(dir, filepath.Base(path)); err != nil {
		return err
	}
	return writeAtomic(path, append(out, '\n'), 0o644)
}

// keepOutOfGit lists name in dir/.gitignore unless it is there already.
func keepOutOfGit(dir, name string) error {
	ignore := filepath.Join(dir, ".gitignore")
	data, err := os.ReadFile(ignore)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", ignore, err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) == name || strings.TrimSpace(l) == "/"+name {
			return nil
		}
	}
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		data = append(data, '\n')
	}
	data = append(data, "# mx-claw: your own settings for this project (\"always\" approvals)\n"+name+"\n"...)
	return writeAtomic(ignore, data, 0o644)
}

// writeAtomic replaces path with data through a temporary file.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// addLocal adds the rules of the local settings: deny and ask always,
// allow when the project is trusted (then s is parsed in full) or the rule
// was granted in mx-claw.
func (p *Policy) addLocal(s *Settings, trusted bool, granted func(rule string) bool) {
	if m := s.DefaultMode; m != "" {
		switch {
		case trusted || m.looseness() < p.mode.looseness():
			p.mode, p.modeOrigin = m, s.Path
		case m.looseness() > p.mode.looseness():
			p.ignored = append(p.ignored, Ignored{Origin: s.Path, Entry: "permissions.defaultMode: " + string(m),
				Reason: "the project is not trusted, and its settings may only tighten permissions"})
		}
	}
	for _, r := range s.Deny {
		p.rules = append(p.rules, EffectiveRule{List: Deny, Rule: r, Origin: s.Path})
	}
	for _, r := range s.Ask {
		p.rules = append(p.rules, EffectiveRule{List: Ask, Rule: r, Origin: s.Path})
	}
	// Not trusted: only the allow rules the user granted in mx-claw apply
	// (kept unparsed by LoadLocalSettings).
	unparsed := s.UnparsedAllow
	for _, r := range s.Allow {
		if !trusted {
			unparsed = append(unparsed, r.Text)
			continue
		}
		p.rules = append(p.rules, EffectiveRule{List: Allow, Rule: r, Origin: s.Path})
	}
	for _, text := range unparsed {
		r, err := ParseRule(text)
		switch {
		case granted == nil || !granted(text):
			p.ignored = append(p.ignored, Ignored{Origin: s.Path, Entry: "permissions.allow: " + text,
				Reason: "not granted in mx-claw, and the project is not trusted"})
		case err != nil:
			p.ignored = append(p.ignored, Ignored{Origin: s.Path, Entry: "permissions.allow: " + text, Reason: err.Error()})
		default:
			p.rules = append(p.rules, EffectiveRule{List: Allow, Rule: r, Origin: s.Path})
		}
	}
}
