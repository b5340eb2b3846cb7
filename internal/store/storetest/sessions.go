package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

func testSessionRoundTrip(t *testing.T, b Backend) {
	ctx := context.Background()
	clock := NewClock()
	s := b.Open(t, Options{Clock: clock.Now})

	in := &protocol.Session{
		ID: "s1", Title: "first", Workspace: "/w", Model: "openai/gpt",
		ParentID: "p0", Agent: "explore", LastError: "boom",
		Usage: protocol.Usage{InputTokens: 1, OutputTokens: 2, CachedTokens: 3, ReasoningTokens: 4},
	}
	if err := s.CreateSession(ctx, in); err != nil {
		t.Fatal(err)
	}
	if in.Status != protocol.StatusIdle || !in.CreatedAt.Equal(clock.Now()) || !in.UpdatedAt.Equal(clock.Now()) {
		t.Errorf("CreateSession did not fill defaults: %+v", in)
	}
	got, err := s.GetSession(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, in) {
		t.Errorf("GetSession = %+v\nwant         %+v", got, in)
	}
	if got.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt location = %v, want UTC", got.CreatedAt.Location())
	}

	if err := s.CreateSession(ctx, &protocol.Session{ID: "s1"}); err == nil {
		t.Error("CreateSession of an existing id succeeded")
	}
	if err := s.CreateSession(ctx, &protocol.Session{}); err == nil {
		t.Error("CreateSession without id succeeded")
	}

	// Given times are kept, to the millisecond, in UTC.
	given := time.Date(2025, 1, 2, 3, 4, 5, 6_789_999, time.FixedZone("x", 3600))
	s2 := &protocol.Session{ID: "s2", CreatedAt: given}
	if err := s.CreateSession(ctx, s2); err != nil {
		t.Fatal(err)
	}
	want := time.Date(2025, 1, 2, 2, 4, 5, 6_000_000, time.UTC)
	if !reflect.DeepEqual(s2.CreatedAt, want) || !reflect.DeepEqual(s2.UpdatedAt, want) {
		t.Errorf("given times stored as %v / %v, want %v", s2.CreatedAt, s2.UpdatedAt, want)
	}

	clock.Add(time.Minute)
	in.Title, in.Model, in.Status, in.LastError = "renamed", "other/m", protocol.StatusFailed, "bad"
	in.Usage.Add(protocol.Usage{InputTokens: 10})
	in.Workspace = "/ignored" // not a mutable field
	if err := s.UpdateSession(ctx, in); err != nil {
		t.Fatal(err)
	}
	if !in.UpdatedAt.Equal(clock.Now()) {
		t.Errorf("UpdatedAt = %v, want %v", in.UpdatedAt, clock.Now())
	}
	got, err = s.GetSession(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	in.Workspace = "/w"
	if !reflect.DeepEqual(got, in) {
		t.Errorf("after update GetSession = %+v\nwant                      %+v", got, in)
	}

	_, err = s.GetSession(ctx, "nope")
	if !errors.Is(err, store.ErrNotFound) || err.Error() != "session nope: not found" {
		t.Errorf("GetSession(nope) = %v", err)
	}
	if err := s.UpdateSession(ctx, &protocol.Session{ID: "nope"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UpdateSession(nope) = %v", err)
	}
}

func testListSessions(t *testing.T, b Backend) {
	ctx := context.Background()
	clock := NewClock()
	s := b.Open(t, Options{Clock: clock.Now})
	for _, sess := range []protocol.Session{
		{ID: "a", Workspace: "/one"},
		{ID: "b", Workspace: "/two"},
		{ID: "c", Workspace: "/one"},
		{ID: "d", Workspace: "/one"},
		{ID: "d1", Workspace: "/one", ParentID: "d", Agent: "explore"},
		{ID: "d2", Workspace: "/one", ParentID: "d", Agent: "general"},
	} {
		clock.Add(time.Second)
		if err := s.CreateSession(ctx, &sess); err != nil {
			t.Fatal(err)
		}
	}
	// Touch a: it becomes the most recent.
	clock.Add(time.Second)
	if _, err := s.AppendMessage(ctx, "a", &protocol.Message{Role: protocol.RoleUser, Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	ids := func(opts store.ListOptions) []string {
		t.Helper()
		list, err := s.ListSessions(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, x := range list {
			out = append(out, x.ID)
		}
		return out
	}
	for _, tc := range []struct {
		opts store.ListOptions
		want []string
	}{
		{store.ListOptions{}, []string{"a", "d", "c", "b"}},
		{store.ListOptions{Limit: 2}, []string{"a", "d"}},
		{store.ListOptions{Workspace: "/one"}, []string{"a", "d", "c"}},
		{store.ListOptions{Workspace: "/one", Limit: 1}, []string{"a"}},
		{store.ListOptions{Workspace: "/none"}, []string{}},
		// Subagents' sessions are listed only when asked for.
		{store.ListOptions{Parent: "d"}, []string{"d2", "d1"}},
		{store.ListOptions{Workspace: "/one", WithChildren: true}, []string{"a", "d2", "d1", "d", "c"}},
	} {
		if got := ids(tc.opts); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ListSessions(%+v) = %v, want %v", tc.opts, got, tc.want)
		}
	}
	list, _ := s.ListSessions(ctx, store.ListOptions{Limit: 1})
	if list[0].MessageCount != 1 {
		t.Errorf("MessageCount = %d, want 1", list[0].MessageCount)
	}
}
