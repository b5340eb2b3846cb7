package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/sessionio"
	"github.com/mx-claw/mx-claw/internal/store"
)

// Redactor returns what hides secrets in exports: the API keys of every
// configured provider, and anything shaped like a credential.
func (a *App) Redactor() *sessionio.Redactor {
	var keys []string
	for name := range a.Config.Providers {
		if v, _, err := a.Secrets.GetKey(name); err == nil && v != "" {
			keys = append(keys, v)
		}
	}
	return sessionio.NewRedactor(keys...)
}

// ExportSession writes a session as JSONL (format "jsonl": the session,
// every message, rewind and event) or Markdown ("markdown": a transcript
// for people), secrets redacted.
func (a *App) ExportSession(ctx context.Context, id, format string, w io.Writer) error {
	s, err := a.Store.GetSession(ctx, id)
	if err != nil {
		return err
	}
	msgs, err := a.Store.Messages(ctx, id, 0)
	if err != nil {
		return err
	}
	rewinds, err := a.Store.Rewinds(ctx, id)
	if err != nil {
		return err
	}
	e := sessionio.Export{Session: s, Messages: msgs, Rewinds: rewinds}
	switch format {
	case "", "jsonl":
		if e.Events, err = a.Store.Events(ctx, id, 0, 0); err != nil {
			return err
		}
		return sessionio.WriteJSONL(w, e, a.Redactor())
	case "markdown", "md":
		return sessionio.WriteMarkdown(w, e, a.Redactor())
	}
	return fmt.Errorf("unknown export format %q: use jsonl or markdown", format)
}

// ImportOutcome is what Import did with one session it read.
type ImportOutcome struct {
	// Source and SourceID identify the session read.
	Source, SourceID string
	Title            string
	// SessionID is the mx-claw session it became (or, if Skipped, the one
	// it already is).
	SessionID string
	Messages  int
	Notes     int
	// Skipped says why nothing was stored: already imported, no messages.
	Skipped string
	// Workspace is the imported session's workspace; WorkspaceNote says
	// why it is not the one the source recorded.
	Workspace     string
	WorkspaceNote string
}

// Import reads the sessions source keeps at path and stores each as an
// mx-claw session whose model is the configured default (so any model can
// continue it). A session imported before (same source and id) is
// skipped, never duplicated. fallbackWorkspace is used when the source
// recorded none, or one that is not a directory here.
func (a *App) Import(ctx context.Context, source, path, fallbackWorkspace string) ([]ImportOutcome, []sessionio.Failure, error) {
	list, failures, err := sessionio.Read(source, path)
	if err != nil {
		return nil, failures, err
	}
	var out []ImportOutcome
	for _, s := range list {
		o := ImportOutcome{Source: s.Source, SourceID: s.SourceID, Title: s.Title, Messages: len(s.Messages), Notes: len(s.Notes)}
		if id, err := a.Store.ImportedSession(ctx, s.Source, s.SourceID); err == nil {
			o.SessionID, o.Skipped = id, "imported before"
			out = append(out, o)
			continue
		} else if !errors.Is(err, store.ErrNotFound) {
			return out, failures, err
		}
		if len(s.Messages) == 0 {
			o.Skipped = "no messages"
			out = append(out, o)
			continue
		}
		o.Workspace, o.WorkspaceNote = importWorkspace(s.Workspace, fallbackWorkspace)
		id, err := a.storeImported(ctx, s, o)
		if err != nil {
			return out, failures, fmt.Errorf("import %s session %s: %w", s.Source, s.SourceID, err)
		}
		o.SessionID = id
		out = append(out, o)
	}
	return out, failures, nil
}

// importWorkspace picks an imported session's workspace: the one it
// recorded if that is a directory here, else the fallback.
func importWorkspace(recorded, fallback string) (string, string) {
	if recorded != "" {
		if real, err := filepath.EvalSymlinks(recorded); err == nil {
			if fi, err := os.Stat(real); err == nil && fi.IsDir() {
				return real, ""
			}
		}
		return fallback, fmt.Sprintf("its workspace %s is not a directory here", recorded)
	}
	return fallback, "the source records no workspace"
}

// storeImported stores one read session, its notes and its source in one
// batch, and returns its id.
func (a *App) storeImported(ctx context.Context, s *sessionio.Session, o ImportOutcome) (string, error) {
	now := time.Now().UTC()
	created, updated := s.CreatedAt, s.UpdatedAt
	if created.IsZero() {
		created = now
	}
	if updated.IsZero() || updated.Before(created) {
		updated = created
	}
	title := s.Title
	if title == "" {
		title = "Imported from " + s.Source
	}
	sess := &protocol.Session{ID: newSessionID(), Title: title, Workspace: o.Workspace, Status: protocol.StatusIdle,
		CreatedAt: created, UpdatedAt: updated}
	// It continues with the configured default model (any model can);
	// with none ready yet, the one configured when it is resumed.
	if m, err := a.ResolveModel(""); err == nil {
		sess.Model = m.ID
	}
	msgs := make([]*protocol.Message, len(s.Messages))
	for i := range s.Messages {
		m := s.Messages[i]
		m.Seq = 0
		msgs[i] = &m
	}
	summary := fmt.Sprintf("imported from %s session %s (%s): %d messages, %d records kept as notes",
		s.Source, s.SourceID, s.Path, len(s.Messages), len(s.Notes))
	if s.Model != "" {
		summary += "; it used the model " + s.Model
	}
	if o.WorkspaceNote != "" {
		summary += "; workspace " + o.Workspace + " because " + o.WorkspaceNote
	}
	evs := []*protocol.Event{
		{Type: protocol.EventSessionCreated, SessionID: sess.ID, Session: sess, Timestamp: now},
		{Type: protocol.EventImportNote, SessionID: sess.ID, Summary: summary, Timestamp: now},
	}
	for _, n := range s.Notes {
		evs = append(evs, &protocol.Event{Type: protocol.EventImportNote, SessionID: sess.ID, Summary: n.What, Text: n.Raw, Timestamp: now})
	}
	err := a.Store.AppendBatch(ctx, sess.ID, store.Batch{NewSession: sess, Messages: msgs, Events: evs,
		Source: &store.SessionSource{Source: s.Source, SourceID: s.SourceID, Path: s.Path}})
	if err != nil {
		return "", err
	}
	return sess.ID, nil
}

// newSessionID returns a random session id of 16 hex digits, as the core
// makes them.
func newSessionID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
