package sandbox

import (
	"path/filepath"
	"strings"
)

// Placeholders returns the absent protected paths (relative to the
// workspace, slash-separated) that this session's commands see as empty
// read-only placeholders: bubblewrap creates them as mount targets for the
// run, `ls -a` shows them, and they are removed after it. Git inside does
// not list them (see [hidePlaceholders]). Other backends create none.
func (s *Session) Placeholders() []string {
	if !s.Enforced() || s.m.Status().Backend != BackendBwrap {
		return nil
	}
	var out []string
	ws := s.policy.Workspace
	for _, m := range s.policy.Plan().Masks {
		if rel, err := filepath.Rel(ws, m); err == nil && !strings.HasPrefix(rel, "..") {
			out = append(out, filepath.ToSlash(rel))
		}
	}
	return out
}
