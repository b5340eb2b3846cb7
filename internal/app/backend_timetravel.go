package app

import (
	"context"
	"errors"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/checkpoint"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// Undo puts back the files the session's last turn changed (/undo);
// conflicts is "", "merge" or "keep". It returns nil and no error when
// there is nothing to undo.
func (b *Backend) Undo(ctx context.Context, sessionID, conflicts string) (*protocol.Restore, error) {
	policy, err := checkpoint.ParsePolicy(conflicts)
	if err != nil {
		return nil, err
	}
	r, err := b.a.Core.Undo(ctx, sessionID, policy, nil)
	if errors.Is(err, agent.ErrNothingToUndo) {
		return nil, nil
	}
	return r, err
}

// Timeline returns the session's user messages as the model sees them and
// the file changes recorded in it, for the /rewind menu.
func (b *Backend) Timeline(ctx context.Context, sessionID string) ([]protocol.Message, []protocol.ChangeRecord, error) {
	tl, err := b.a.Core.Timeline(ctx, sessionID)
	if err != nil {
		return nil, nil, err
	}
	var msgs []protocol.Message
	var changes []protocol.ChangeRecord
	for _, e := range tl {
		msgs = append(msgs, protocol.Message{Seq: e.Seq, Role: protocol.RoleUser, Content: e.Text})
		changes = append(changes, e.Changes...)
	}
	return msgs, changes, nil
}

// Rewind takes the session back to before its user message toSeq: files,
// conversation or both (/rewind).
func (b *Backend) Rewind(ctx context.Context, sessionID string, toSeq int64, files, conversation bool, conflicts string) (*protocol.Restore, error) {
	policy, err := checkpoint.ParsePolicy(conflicts)
	if err != nil {
		return nil, err
	}
	return b.a.Core.Rewind(ctx, sessionID, toSeq, agent.RewindOptions{Files: files, Conversation: conversation, Policy: policy}, nil)
}

// SearchSessions searches the messages of the workspace's sessions
// (/sessions QUERY).
func (b *Backend) SearchSessions(ctx context.Context, query string) ([]protocol.SearchHit, error) {
	return b.a.Store.Search(ctx, store.SearchQuery{Text: query, Workspace: b.ws, Limit: 20})
}
