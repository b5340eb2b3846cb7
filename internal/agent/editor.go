package agent

import "github.com/mx-claw/mx-claw/internal/tools"

// SetEditor makes the file tools of the session's turns read and write
// through the user's editor (an ACP client that offers its files); nil
// goes back to the disk. It applies from the next tool call on, in this
// process only.
func (c *Core) SetEditor(sessionID string, ed tools.Editor) {
	if ed == nil {
		c.editors.Delete(sessionID)
		return
	}
	c.editors.Store(sessionID, ed)
}

// editor returns the session's editor, or nil.
func (c *Core) editor(sessionID string) tools.Editor {
	if ed, ok := c.editors.Load(sessionID); ok {
		return ed.(tools.Editor)
	}
	return nil
}
