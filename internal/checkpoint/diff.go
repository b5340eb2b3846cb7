package checkpoint

import (
	"fmt"
	"slices"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// Diff returns what changed between two snapshots of the same workspace,
// in path order: every path whose type, mode or contents differ. When
// either snapshot is partial, only the paths it looked at are compared.
// A file whose contents were saved in neither snapshot counts as changed
// when its size or modification time differ.
func Diff(before, after *Manifest) []protocol.FileChange {
	var paths []string
	switch {
	case before.Scope == nil && after.Scope == nil:
		seen := make(map[string]bool, len(after.Entries))
		for p := range before.Entries {
			seen[p] = true
			paths = append(paths, p)
		}
		for p := range after.Entries {
			if !seen[p] {
				paths = append(paths, p)
			}
		}
	default:
		seen := make(map[string]bool)
		for _, scope := range [][]string{before.Scope, after.Scope} {
			for _, p := range scope {
				if !seen[p] {
					seen[p] = true
					paths = append(paths, p)
				}
			}
		}
	}
	slices.Sort(paths)
	var out []protocol.FileChange
	for _, p := range paths {
		b, a := before.Entries[p], after.Entries[p]
		if same(b, a) {
			continue
		}
		out = append(out, protocol.FileChange{Path: p, Before: b.FileState, After: a.FileState})
	}
	return out
}

// same reports whether two entries of one path hold the same thing.
func same(b, a Entry) bool {
	if b.Mode != a.Mode {
		return false
	}
	if !b.Exists() || b.IsDir() {
		return true
	}
	if b.OID != "" || a.OID != "" {
		return b.OID == a.OID
	}
	// Neither was saved: judge by what stat says.
	return b.Size == a.Size && b.MTime == a.MTime && b.CTime == a.CTime
}

// Describe returns one line per change for people: "modified a.go",
// "created docs/", "renamed old.txt → new.txt" (a deletion and a creation
// of the same contents), "mode b.sh (644 → 755)", with "(not saved: …)"
// where the state before cannot be restored.
func Describe(changes []protocol.FileChange) []string {
	// Pair each deletion with a creation of the same contents.
	createdWith := make(map[string][]int) // oid → indexes of creations
	for i, c := range changes {
		if c.Kind() == protocol.ChangeCreated && c.After.OID != "" && !c.After.IsDir() {
			createdWith[c.After.OID] = append(createdWith[c.After.OID], i)
		}
	}
	renamedTo := make(map[int]int)    // deletion → creation
	renamedFrom := make(map[int]bool) // creations that are a rename's end
	for i, c := range changes {
		if c.Kind() != protocol.ChangeDeleted || c.Before.OID == "" || c.Before.IsDir() {
			continue
		}
		if list := createdWith[c.Before.OID]; len(list) > 0 {
			renamedTo[i], renamedFrom[list[0]] = list[0], true
			createdWith[c.Before.OID] = list[1:]
		}
	}
	var out []string
	for i, c := range changes {
		if renamedFrom[i] {
			continue
		}
		name := c.Path
		if c.Before.IsDir() || c.After.IsDir() {
			name += "/"
		}
		var line string
		switch c.Kind() {
		case protocol.ChangeDeleted:
			if j, ok := renamedTo[i]; ok {
				line = fmt.Sprintf("renamed %s → %s", c.Path, changes[j].Path)
			} else {
				line = "deleted " + name
			}
		case protocol.ChangeCreated:
			line = "created " + name
		case protocol.ChangeMode:
			line = fmt.Sprintf("mode %s (%o → %o)", name, c.Before.Mode&protocol.ModePerm, c.After.Mode&protocol.ModePerm)
		default:
			line = "modified " + name
		}
		if !c.Before.Saved() {
			line += " (its earlier contents were not saved: too large)"
		}
		out = append(out, line)
	}
	return out
}

// Summary is a one-line count of changes: "3 files changed".
func Summary(changes []protocol.FileChange) string {
	n := 0
	for _, c := range changes {
		if !c.Before.IsDir() && !c.After.IsDir() {
			n++
		}
	}
	switch n {
	case 0:
		return ""
	case 1:
		return "1 file changed"
	}
	return fmt.Sprintf("%d files changed", n)
}
