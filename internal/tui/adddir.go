package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
)

// dirBackend is a Backend whose sessions may use directories beside the
// workspace (/add-dir).
type dirBackend interface {
	// AddDir adds a directory (relative to the workspace, ~/ or absolute)
	// to the sessions of this mx-claw and returns its canonical path.
	AddDir(dir string) (string, error)
	// AddedDirs lists the directories added so far.
	AddedDirs() []string
}

// addDirCommand runs /add-dir DIR, or lists the added directories.
func (m *Model) addDirCommand(text string) []tea.Cmd {
	db, ok := m.backend.(dirBackend)
	if !ok {
		m.print(m.th.dim.Render("Extra directories are not available here."))
		return nil
	}
	dir := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), "/add-dir"))
	if dir == "" {
		dirs := db.AddedDirs()
		if len(dirs) == 0 {
			m.print(m.th.dim.Render("No directories added; /add-dir DIR adds one beside the workspace."))
			return nil
		}
		m.print(m.th.bold.Render("Added directories") + "\n  " + clean(strings.Join(dirs, "\n  ")))
		return nil
	}
	return []tea.Cmd{func() tea.Msg {
		d, err := db.AddDir(dir)
		if err != nil {
			return noticeMsg{err: err}
		}
		return noticeMsg{text: "Added " + clean(d) + ": the tools may use it from the next call on, as the workspace."}
	}}
}
