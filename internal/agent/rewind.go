package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mx-claw/mx-claw/internal/checkpoint"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// ErrNothingToUndo is returned by Undo when no turn of the session changed
// files that are not already put back.
var ErrNothingToUndo = errors.New("nothing to undo: no turn of this session changed files that are not already put back")

// NotUserMessageError is returned by Rewind and Fork for a message that is
// not one of the session's (visible) user messages.
type NotUserMessageError struct {
	SessionID string
	Seq       int64
}

func (e *NotUserMessageError) Error() string {
	return fmt.Sprintf("message %d is not a user message of session %s; `mx-claw rewind --session %s` lists them",
		e.Seq, e.SessionID, e.SessionID)
}

// RewindOptions say what Rewind takes back.
type RewindOptions struct {
	// Files puts the files back as they were before the message.
	Files bool
	// Conversation makes the model's view end before the message; the
	// stored transcript keeps everything.
	Conversation bool
	// Policy handles files changed since the agent's change.
	Policy checkpoint.Policy
}

// TimelineEntry is one user message of a session with what the turns
// from it to the next user message did to the files.
type TimelineEntry struct {
	Seq  int64
	Text string
	// Changes are the recorded file changes after the message and before
	// the next user message, oldest first.
	Changes []protocol.ChangeRecord
}

// visible drops from msgs (in Seq order) the messages rewinds hid from the
// model's view.
func visible(msgs []protocol.Message, rewinds []protocol.Rewind) []protocol.Message {
	if len(rewinds) == 0 {
		return msgs
	}
	out := msgs[:0:0]
	for _, m := range msgs {
		hidden := false
		for _, r := range rewinds {
			if m.Seq >= r.ToSeq && m.Seq <= r.FromSeq {
				hidden = true
				break
			}
		}
		if !hidden {
			out = append(out, m)
		}
	}
	return out
}

// transcript returns the session's messages as the model sees them: every
// stored message except those a rewind took back.
func (c *Core) transcript(ctx context.Context, sessionID string) ([]protocol.Message, error) {
	msgs, err := c.opts.Store.Messages(ctx, sessionID, 0)
	if err != nil {
		return nil, err
	}
	rewinds, err := c.opts.Store.Rewinds(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	return visible(msgs, rewinds), nil
}

// Transcript returns the session's messages as the model sees them (after
// rewinds), for front ends that show a resumed session.
func (c *Core) Transcript(ctx context.Context, sessionID string) ([]protocol.Message, error) {
	return c.transcript(ctx, sessionID)
}

// liveCompactions drops the compaction records that summarise messages a
// later rewind took back.
func liveCompactions(recs []protocol.Compaction, rewinds []protocol.Rewind) []protocol.Compaction {
	if len(rewinds) == 0 {
		return recs
	}
	out := recs[:0:0]
	for _, c := range recs {
		dead := false
		for _, r := range rewinds {
			if c.UpToSeq >= r.ToSeq && !c.CreatedAt.After(r.CreatedAt) {
				dead = true
				break
			}
		}
		if !dead {
			out = append(out, c)
		}
	}
	return out
}

// hold makes this process the session's only writer while f runs: no turn
// of this process and no other process may run on it meanwhile.
func (c *Core) hold(ctx context.Context, sessionID string, f func(*protocol.Session) error) error {
	sess, err := c.opts.Store.GetSession(ctx, sessionID)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: %s", ErrSessionNotFound, sessionID)
	}
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if err := c.claim(sessionID, cancel); err != nil {
		return err
	}
	defer c.unclaim(sessionID)
	if _, err := c.opts.Store.AcquireLease(ctx, sessionID, c.opts.Owner, c.opts.LeaseTTL); err != nil {
		return err
	}
	defer func() {
		if err := c.opts.Store.ReleaseLease(context.WithoutCancel(ctx), sessionID, c.opts.Owner); err != nil {
			c.log.Warn("release lease", "session", sessionID, "err", err)
		}
	}()
	return f(sess)
}

// checkpointStore returns the checkpoint store of the session's workspace.
func (c *Core) checkpointStore(sess *protocol.Session) (*checkpoint.Store, error) {
	if c.opts.Checkpoints == nil {
		return nil, ErrNoCheckpoints
	}
	ws, err := tools.NewWorkspace(sess.Workspace)
	if err != nil {
		return nil, fmt.Errorf("workspace of session %s: %w", sess.ID, err)
	}
	return c.opts.Checkpoints.For(ws.Root())
}

// Undo puts back the files changed by the session's last turn that
// changed any (and whose changes are not put back already): by its file
// tools and its commands alike. A file changed since by someone else is
// handled by policy: listed as a conflict and left alone, kept, or
// merged. Each Undo goes one turn further back. The result is stored with
// a checkpoint.restored event and a note for the model; sink (which may be
// nil) gets the event.
func (c *Core) Undo(ctx context.Context, sessionID string, policy checkpoint.Policy, sink func(protocol.Event)) (*protocol.Restore, error) {
	var out *protocol.Restore
	err := c.hold(ctx, sessionID, func(sess *protocol.Session) error {
		cs, err := c.checkpointStore(sess)
		if err != nil {
			return err
		}
		all, err := c.opts.Store.Changes(ctx, sessionID, 0)
		if err != nil {
			return err
		}
		turn := ""
		var last int64
		for _, r := range all {
			if !r.Reverted && r.MessageSeq >= last {
				turn, last = r.TurnID, r.MessageSeq
			}
		}
		if turn == "" {
			return ErrNothingToUndo
		}
		var recs []protocol.ChangeRecord
		for _, r := range all {
			if !r.Reverted && r.TurnID == turn {
				recs = append(recs, r)
			}
		}
		res, err := cs.Restore(ctx, recs, policy)
		if err != nil {
			return err
		}
		res.TurnID = turn
		out = &res.Restore
		return c.storeRestore(ctx, sessionID, res, nil, note(res.Restore, "undid the file changes of your last turn that changed files"), sink)
	})
	return out, err
}

// Rewind takes the session back to before its user message toSeq: the
// files (the changes of every later call, newest last, put back as Undo
// does) and/or the conversation (the model's view ends before the
// message; the stored transcript keeps every message).
func (c *Core) Rewind(ctx context.Context, sessionID string, toSeq int64, opts RewindOptions, sink func(protocol.Event)) (*protocol.Restore, error) {
	if !opts.Files && !opts.Conversation {
		return nil, errors.New("rewind: choose the files, the conversation or both")
	}
	out := &protocol.Restore{ToSeq: toSeq}
	err := c.hold(ctx, sessionID, func(sess *protocol.Session) error {
		msgs, err := c.transcript(ctx, sessionID)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(msgs, func(m protocol.Message) bool { return m.Seq == toSeq })
		if i < 0 || msgs[i].Role != protocol.RoleUser {
			return &NotUserMessageError{SessionID: sessionID, Seq: toSeq}
		}
		res := checkpoint.Result{Restore: *out}
		if opts.Files {
			cs, err := c.checkpointStore(sess)
			if err != nil {
				return err
			}
			recs, err := c.opts.Store.Changes(ctx, sessionID, toSeq)
			if err != nil {
				return err
			}
			if res, err = cs.Restore(ctx, recs, opts.Policy); err != nil {
				return err
			}
			res.ToSeq = toSeq
		}
		var rw *protocol.Rewind
		if opts.Conversation {
			rw = &protocol.Rewind{ToSeq: toSeq, FromSeq: msgs[len(msgs)-1].Seq}
		}
		var msg string
		switch {
		case opts.Files && !opts.Conversation:
			msg = fmt.Sprintf("put the files back as they were before message %d (the conversation is kept)", toSeq)
		case !opts.Files:
			msg = fmt.Sprintf("took the conversation back to before message %d; the files were left as they are now, later changes included", toSeq)
		}
		*out = res.Restore
		return c.storeRestore(ctx, sessionID, res, rw, note(res.Restore, msg), sink)
	})
	return out, err
}

// storeRestore stores what an undo or rewind did: the reverted change
// records, the rewind, a note for the model and the events, in one batch.
func (c *Core) storeRestore(ctx context.Context, sessionID string, res checkpoint.Result, rw *protocol.Rewind, noteText string, sink func(protocol.Event)) error {
	now := c.opts.Now().UTC()
	r := res.Restore
	b := store.Batch{Reverted: res.Reverted, Rewind: rw}
	if noteText != "" {
		b.Messages = []*protocol.Message{{Role: protocol.RoleSystem, Content: noteText}}
	}
	var evs []*protocol.Event
	if rw == nil || len(r.Restored)+len(r.Merged)+len(r.Conflicts)+len(r.Kept)+len(r.Failed) > 0 {
		evs = append(evs, &protocol.Event{Type: protocol.EventCheckpointRestored, SessionID: sessionID, Timestamp: now, Restore: &r})
	}
	if rw != nil {
		evs = append(evs, &protocol.Event{Type: protocol.EventConversationRewound, SessionID: sessionID, Timestamp: now, Restore: &r})
	}
	b.Events = evs
	if err := c.opts.Store.AppendBatch(context.WithoutCancel(ctx), sessionID, b); err != nil {
		return fmt.Errorf("store the restore: %w", err)
	}
	if sink != nil {
		for _, e := range evs {
			sink(*e)
		}
	}
	return nil
}

// note is the message that tells the model what happened to the files,
// or "" when nothing did and what is empty.
func note(r protocol.Restore, what string) string {
	if what == "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Note: the user %s.", what)
	list := func(label string, paths []string) {
		if len(paths) > 0 {
			fmt.Fprintf(&b, " %s: %s.", label, strings.Join(paths, ", "))
		}
	}
	list("Put back as they were", r.Restored)
	list("Merged (your change taken out, the user's kept)", r.Merged)
	list("Left as the user changed them", append(slices.Clone(r.Conflicts), r.Kept...))
	if len(r.Restored)+len(r.Merged) > 0 {
		b.WriteString(" Read a file again before you edit it.")
	}
	return b.String()
}

// Timeline returns the session's visible user messages, oldest first, each
// with the file changes recorded between it and the next one: the menu of
// points a rewind can go back to.
func (c *Core) Timeline(ctx context.Context, sessionID string) ([]TimelineEntry, error) {
	msgs, err := c.transcript(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	changes, err := c.opts.Store.Changes(ctx, sessionID, 0)
	if err != nil {
		return nil, err
	}
	var out []TimelineEntry
	for _, m := range msgs {
		if m.Role == protocol.RoleUser {
			out = append(out, TimelineEntry{Seq: m.Seq, Text: m.Content})
		}
	}
	for _, r := range changes {
		// The last user message at or before the change's result.
		i := sort.Search(len(out), func(i int) bool { return out[i].Seq > r.MessageSeq }) - 1
		if i >= 0 {
			out[i].Changes = append(out[i].Changes, r)
		}
	}
	return out, nil
}

// Fork starts a new session with the source session's transcript as the
// model sees it, up to (not including) its user message atSeq, or all of
// it when atSeq is 0. The new session's parent is the source; its files
// are not touched. The read-before-write guard's knowledge of files is
// copied too.
func (c *Core) Fork(ctx context.Context, sessionID string, atSeq int64, sink func(protocol.Event)) (*protocol.Session, error) {
	st := c.opts.Store
	src, err := st.GetSession(ctx, sessionID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrSessionNotFound, sessionID)
	}
	if err != nil {
		return nil, err
	}
	msgs, err := c.transcript(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if atSeq > 0 {
		i := slices.IndexFunc(msgs, func(m protocol.Message) bool { return m.Seq == atSeq })
		if i < 0 || msgs[i].Role != protocol.RoleUser {
			return nil, &NotUserMessageError{SessionID: sessionID, Seq: atSeq}
		}
		msgs = msgs[:i]
	}
	files, err := st.Files(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	now := c.opts.Now().UTC()
	title := src.Title
	if title == "" {
		title = "(untitled)"
	}
	s := &protocol.Session{ID: newID(), Title: "Fork of " + title, Workspace: src.Workspace, Model: src.Model,
		Status: protocol.StatusIdle, ParentID: src.ID, CreatedAt: now, UpdatedAt: now}
	copies := make([]*protocol.Message, len(msgs))
	for i := range msgs {
		m := msgs[i]
		m.Seq = 0
		copies[i] = &m
	}
	e := protocol.Event{Type: protocol.EventSessionCreated, SessionID: s.ID, Model: s.Model, Session: s, Timestamp: now}
	if err := st.AppendBatch(ctx, s.ID, store.Batch{NewSession: s, Messages: copies, Files: files,
		Events: []*protocol.Event{&e}}); err != nil {
		return nil, fmt.Errorf("fork session %s: %w", sessionID, err)
	}
	s.MessageCount = int64(len(copies))
	if sink != nil {
		sink(e)
	}
	return s, nil
}
