package protocol

import "time"

// The event types of checkpoints and time travel (issue 16).
const (
	// EventCheckpointRestored reports an undo or a rewind of files
	// (Restore).
	EventCheckpointRestored EventType = "checkpoint.restored"
	// EventConversationRewound reports that the model's view of the
	// conversation now ends before message Restore.ToSeq; the stored
	// transcript keeps every message.
	EventConversationRewound EventType = "conversation.rewound"
)

// File modes as FileState.Mode holds them: the type bits of a Unix
// st_mode (which git's tree modes also use) and the permission bits.
const (
	ModeTypeMask uint32 = 0o170000
	ModeRegular  uint32 = 0o100000
	ModeSymlink  uint32 = 0o120000
	ModeDir      uint32 = 0o040000
	ModePerm     uint32 = 0o7777
)

// FileState is what a checkpoint saw at one path.
type FileState struct {
	// Mode is the entry's type and permission bits (ModeRegular|0o644,
	// ModeSymlink, ModeDir|0o755, ...); 0 means nothing was there.
	Mode uint32 `json:"mode,omitempty"`
	// OID is the git blob id of the contents (a symlink's target) in the
	// workspace's checkpoint store. It is empty for a directory, for no
	// file, and for a file whose contents were not saved (too large, over
	// the checkpoint's budget, unreadable): such a state cannot be
	// restored.
	OID string `json:"oid,omitempty"`
	// Size is the size in bytes of a file.
	Size int64 `json:"size,omitempty"`
}

// Exists reports whether something was at the path.
func (s FileState) Exists() bool { return s.Mode != 0 }

// IsDir reports whether the state is a directory.
func (s FileState) IsDir() bool { return s.Mode&ModeTypeMask == ModeDir }

// Saved reports whether the state can be restored: nothing, a directory,
// or a file whose contents are in the checkpoint store.
func (s FileState) Saved() bool { return !s.Exists() || s.IsDir() || s.OID != "" }

// Same reports whether s and o are the same contents with the same mode.
// States whose contents were not saved are never the same as anything
// but nothing.
func (s FileState) Same(o FileState) bool {
	if s.Mode != o.Mode {
		return false
	}
	if !s.Exists() || s.IsDir() {
		return true
	}
	return s.OID != "" && s.OID == o.OID
}

// FileChange is one workspace path a tool call changed, as the checkpoints
// before and after the call saw it.
type FileChange struct {
	// Path is slash-separated and relative to the workspace root.
	Path   string    `json:"path"`
	Before FileState `json:"before"`
	After  FileState `json:"after"`
}

// The kinds of FileChange.Kind.
const (
	ChangeCreated  = "created"
	ChangeDeleted  = "deleted"
	ChangeModified = "modified"
	ChangeMode     = "mode"
)

// Kind says what happened: ChangeCreated, ChangeDeleted, ChangeModified
// (contents, or a file that became a symlink or a directory) or
// ChangeMode (permissions only).
func (c FileChange) Kind() string {
	switch {
	case !c.Before.Exists():
		return ChangeCreated
	case !c.After.Exists():
		return ChangeDeleted
	case c.Before.Mode&ModeTypeMask == c.After.Mode&ModeTypeMask && c.Before.OID == c.After.OID && c.Before.OID != "":
		return ChangeMode
	}
	return ChangeModified
}

// ChangeRecord is a stored FileChange: which call of which turn made it,
// and whether an undo or rewind has reverted it since.
type ChangeRecord struct {
	ID         int64  `json:"id"`
	SessionID  string `json:"sessionId"`
	TurnID     string `json:"turnId"`
	ToolCallID string `json:"toolCallId,omitempty"`
	// MessageSeq is the Seq of the tool result the change was stored
	// with: changes after user message N have MessageSeq > N.
	MessageSeq int64 `json:"messageSeq"`
	FileChange
	Reverted  bool      `json:"reverted,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// Rewind records that the model's view of a session skips its messages
// with ToSeq <= Seq <= FromSeq: the conversation was taken back to before
// message ToSeq when FromSeq was its last message.
type Rewind struct {
	ToSeq     int64     `json:"toSeq"`
	FromSeq   int64     `json:"fromSeq"`
	CreatedAt time.Time `json:"createdAt"`
}

// Restore reports what an undo or a rewind did to the files.
type Restore struct {
	// ToSeq is the user message a rewind went back to (before it); 0 for
	// an undo.
	ToSeq int64 `json:"toSeq,omitempty"`
	// TurnID is the turn an undo reverted.
	TurnID string `json:"turnId,omitempty"`
	// Restored are the paths put back as they were.
	Restored []string `json:"restored,omitempty"`
	// Merged are paths changed since by someone else, where the agent's
	// change was taken out by a three-way merge; MergeConflicts are those
	// of them left with conflict markers.
	Merged         []string `json:"merged,omitempty"`
	MergeConflicts []string `json:"mergeConflicts,omitempty"`
	// Conflicts are paths changed since the agent's change and left as
	// they are, waiting for a decision (merge or keep).
	Conflicts []string `json:"conflicts,omitempty"`
	// Kept are conflicting paths the user chose to keep as they are.
	Kept []string `json:"kept,omitempty"`
	// Failed are paths that could not be restored, with the reason.
	Failed []string `json:"failed,omitempty"`
}
