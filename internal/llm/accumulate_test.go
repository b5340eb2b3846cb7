package llm

import (
	"slices"
	"testing"
)

func TestToolCallAccumulator(t *testing.T) {
	t.Parallel()
	type piece struct {
		index          int
		id, name, args string
	}
	tests := []struct {
		name   string
		pieces []piece
		want   []ToolCall
	}{
		{
			name: "none",
		},
		{
			name: "split arguments",
			pieces: []piece{
				{0, "call_1", "get_weather", ""},
				{0, "", "", `{"ci`},
				{0, "", "", `ty":"Edinburgh"`},
				{0, "", "", `}`},
			},
			want: []ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Edinburgh"}`}},
		},
		{
			name: "whole call in one piece",
			pieces: []piece{
				{0, "call_1", "ls", `{"path":"."}`},
			},
			want: []ToolCall{{ID: "call_1", Name: "ls", Arguments: `{"path":"."}`}},
		},
		{
			name: "parallel, interleaved",
			pieces: []piece{
				{0, "a", "read", `{"p`},
				{1, "b", "grep", `{"q`},
				{0, "", "", `":1}`},
				{1, "", "", `":2}`},
			},
			want: []ToolCall{
				{ID: "a", Name: "read", Arguments: `{"p":1}`},
				{ID: "b", Name: "grep", Arguments: `{"q":2}`},
			},
		},
		{
			name: "out of order indexes come out sorted",
			pieces: []piece{
				{2, "c", "third", "{}"},
				{0, "a", "first", "{}"},
				{1, "b", "second", "{}"},
			},
			want: []ToolCall{
				{ID: "a", Name: "first", Arguments: "{}"},
				{ID: "b", Name: "second", Arguments: "{}"},
				{ID: "c", Name: "third", Arguments: "{}"},
			},
		},
		{
			name: "repeated id and name are not doubled",
			pieces: []piece{
				{0, "a", "read", `{"x":`},
				{0, "a", "read", `1}`},
			},
			want: []ToolCall{{ID: "a", Name: "read", Arguments: `{"x":1}`}},
		},
		{
			name: "no index",
			pieces: []piece{
				{-1, "a", "read", `{"x":`},
				{-1, "", "", `1}`},
				{-1, "b", "grep", `{}`},
			},
			want: []ToolCall{
				{ID: "a", Name: "read", Arguments: `{"x":1}`},
				{ID: "b", Name: "grep", Arguments: `{}`},
			},
		},
		{
			name: "index reused for a new call",
			pieces: []piece{
				{0, "a", "read", `{}`},
				{0, "b", "grep", `{"q`},
				{0, "", "", `":1}`},
			},
			want: []ToolCall{
				{ID: "a", Name: "read", Arguments: `{}`},
				{ID: "b", Name: "grep", Arguments: `{"q":1}`},
			},
		},
		{
			name: "id after the first piece",
			pieces: []piece{
				{0, "", "read", `{`},
				{0, "late", "", `}`},
			},
			want: []ToolCall{{ID: "late", Name: "read", Arguments: `{}`}},
		},
		{
			name: "no id at all",
			pieces: []piece{
				{0, "", "read", `{}`},
			},
			want: []ToolCall{{Name: "read", Arguments: `{}`}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var a ToolCallAccumulator
			for _, p := range tt.pieces {
				a.Add(p.index, p.id, p.name, p.args)
			}
			got := a.Calls()
			if !slices.Equal(got, tt.want) {
				t.Fatalf("Calls() = %+v\nwant %+v", got, tt.want)
			}
			if a.Len() != len(tt.want) {
				t.Fatalf("Len() = %d, want %d", a.Len(), len(tt.want))
			}
			a.Reset()
			if a.Len() != 0 || a.Calls() != nil {
				t.Fatal("Reset left calls behind")
			}
		})
	}
}

func TestToolCallAccumulatorCallsIsACopy(t *testing.T) {
	t.Parallel()
	var a ToolCallAccumulator
	a.Add(0, "a", "f", "{")
	first := a.Calls()
	a.Add(0, "", "", "}")
	if first[0].Arguments != "{" || a.Calls()[0].Arguments != "{}" {
		t.Fatalf("first = %q, now = %q", first[0].Arguments, a.Calls()[0].Arguments)
	}
}

// TestToolCallAccumulatorMaxArgs: arguments past the cap are dropped as
// they come, counted, and the call says how large they were; other calls
// of the response are whole.
func TestToolCallAccumulatorMaxArgs(t *testing.T) {
	t.Parallel()
	a := ToolCallAccumulator{MaxArgs: 10}
	a.Add(0, "big", "write", `{"content":`)
	a.Add(0, "", "", `"0123456789"`)
	a.Add(0, "", "", `}`)
	a.Add(1, "small", "read", `{"p":1}`)
	got := a.Calls()
	want := []ToolCall{
		{ID: "big", Name: "write", TooLarge: 24},
		{ID: "small", Name: "read", Arguments: `{"p":1}`},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("calls = %+v, want %+v", got, want)
	}
	if a.Dropped() != 24 {
		t.Errorf("dropped %d bytes, want 24", a.Dropped())
	}
	a.Reset()
	if a.Dropped() != 0 || a.MaxArgs != 10 {
		t.Errorf("after Reset: dropped %d, MaxArgs %d", a.Dropped(), a.MaxArgs)
	}
}
