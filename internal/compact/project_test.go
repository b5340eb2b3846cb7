package compact

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

func TestProjectWithoutRecordsIsTheRepairedTranscript(t *testing.T) {
	t.Parallel()
	for _, tr := range []string{
		"",
		"S U A",
		"S S U A:a T:a A",
		"S U A:a,b T:b T:a A",                    // results out of order
		"S U A:a,b T:a U A",                      // missing result
		"S U T:x A:a T:a T:a A",                  // orphan and duplicate
		"S U A:a U T:a A",                        // result separated from its call
		"U A:a T:a",                              // no system message
		"S U A:a,a T:a A",                        // two calls with one id
		"S U A:a T:b T:a A:c T!:c A:d U A:e T:e", // a bit of everything
	} {
		msgs, _ := parse(t, tr)
		view := Project(msgs, nil, "ledger")
		if err := sameRequest(view, referenceRepair(msgs)); err != nil {
			t.Errorf("%q: %v", tr, err)
		}
		if err := CheckPairing(view); err != nil {
			t.Errorf("%q: %v", tr, err)
		}
	}
}

func TestProjectWithRecords(t *testing.T) {
	t.Parallel()
	msgs, _ := parse(t, "S S U A:a T:a A U A:b T:b A")
	records := []Record{
		{ID: "r1", UpToSeq: 4, Summary: "first summary"},
		{ID: "r2", UpToSeq: 6, Summary: "second summary", Ledger: "## Ledger\n\nstored ledger"},
	}
	view := Project(msgs, records, "## Ledger\n\nnever touch vendor/")
	if err := CheckPairing(view); err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for _, m := range view {
		seqs = append(seqs, m.Seq)
	}
	if want := []int64{1, 2, 0, 7, 8, 9, 10}; !reflect.DeepEqual(seqs, want) {
		t.Fatalf("view seqs %v, want %v", seqs, want)
	}
	sm := view[2]
	if sm.Role != protocol.RoleUser || !strings.HasPrefix(sm.Content, SummaryHeader) {
		t.Fatalf("summary message %+v", sm)
	}
	for _, want := range []string{"second summary", "never touch vendor/", "up to seq 6"} {
		if !strings.Contains(sm.Content, want) {
			t.Errorf("summary message lacks %q:\n%s", want, sm.Content)
		}
	}
	for _, unwanted := range []string{"first summary", "stored ledger"} {
		if strings.Contains(sm.Content, unwanted) {
			t.Errorf("summary message has %q: only the latest record and the given ledger count", unwanted)
		}
	}
	// A resumed session with the same records sends the same view.
	again := Project(append([]protocol.Message(nil), msgs...), append([]Record(nil), records...), "## Ledger\n\nnever touch vendor/")
	if !reflect.DeepEqual(view, again) {
		t.Error("Project is not deterministic")
	}
	// The view is a copy: changing it leaves the transcript alone.
	view[3].Content = "changed"
	if msgs[6].Content == "changed" {
		t.Error("Project shares the transcript's messages")
	}
}

func TestProjectRecordCoveringEverything(t *testing.T) {
	t.Parallel()
	msgs, _ := parse(t, "S U A:a T:a")
	view := Project(msgs, []Record{{UpToSeq: 99, Summary: "all"}}, "")
	if len(view) != 2 || !isSummary(&view[1]) {
		t.Fatalf("view %+v", view)
	}
}

func TestProjectRecordSplittingAPair(t *testing.T) {
	t.Parallel()
	// A record made by hand (or by an older version) that ends between a
	// call and its results: the orphaned results are dropped, the view is
	// still paired.
	msgs, _ := parse(t, "S U A:a,b T:a T:b A")
	view := Project(msgs, []Record{{UpToSeq: 4, Summary: "s"}}, "")
	if err := CheckPairing(view); err != nil {
		t.Fatal(err)
	}
	if len(view) != 3 || view[2].Seq != 6 {
		t.Fatalf("view %+v", view)
	}
}

func TestCheckPairing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		transcript string
		ok         bool
	}{
		{"S U A:a T:a A", true},
		{"S U A:a,b T:a T:b", true},
		{"S U A:a,b T:b T:a", false},
		{"S U A:a,b T:a", false},
		{"S U A:a U T:a", false},
		{"S T:a", false},
		{"S U A:a T:a T:a", false},
	}
	for _, tt := range tests {
		msgs, _ := parse(t, tt.transcript)
		err := CheckPairing(msgs)
		if (err == nil) != tt.ok {
			t.Errorf("%q: CheckPairing = %v, want ok %v", tt.transcript, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrUnpaired) {
			t.Errorf("%q: error %v is not ErrUnpaired", tt.transcript, err)
		}
	}
}

// randomTranscript builds a transcript from fuzz bytes: system messages,
// user and assistant messages, calls with results that may be missing,
// duplicated, reordered, orphaned or late.
func randomTranscript(data []byte) []protocol.Message {
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	var msgs []protocol.Message
	add := func(m protocol.Message) {
		m.Seq = int64(len(msgs) + 1)
		if m.Content == "" {
			m.Content = strings.Repeat("x", int(next()%64))
		}
		msgs = append(msgs, m)
	}
	for range 1 + next()%3 {
		add(protocol.Message{Role: protocol.RoleSystem})
	}
	ids := 0
	for len(data) > 0 {
		switch op := next() % 8; op {
		case 0, 1:
			add(protocol.Message{Role: protocol.RoleUser})
		case 2:
			add(protocol.Message{Role: protocol.RoleAssistant})
		case 3:
			// A stray result: an orphan, or a late answer to an earlier call.
			add(protocol.Message{Role: protocol.RoleTool, ToolCallID: fmt.Sprintf("c%d", int(next())%max(ids, 1))})
		default:
			n := 1 + int(next()%4)
			var calls []protocol.ToolCall
			for range n {
				calls = append(calls, protocol.ToolCall{ID: fmt.Sprintf("c%d", ids), Name: "run_command", Arguments: `{"command":"ls"}`})
				ids++
			}
			add(protocol.Message{Role: protocol.RoleAssistant, ToolCalls: calls})
			mode := next()
			order := make([]int, n)
			for i := range order {
				order[i] = i
			}
			if mode&1 != 0 && n > 1 { // reorder
				order[0], order[n-1] = order[n-1], order[0]
			}
			for _, k := range order {
				if mode&2 != 0 && k == n-1 { // missing
					continue
				}
				add(protocol.Message{Role: protocol.RoleTool, ToolCallID: calls[k].ID, IsError: mode&8 != 0})
				if mode&4 != 0 && k == 0 { // duplicate
					add(protocol.Message{Role: protocol.RoleTool, ToolCallID: calls[k].ID})
				}
			}
		}
	}
	return msgs
}

func FuzzProject(f *testing.F) {
	f.Add([]byte{1, 0, 4, 2, 0, 1, 2, 5, 0, 0})
	f.Add([]byte{2, 0, 5, 3, 7, 3, 1, 6, 1, 2, 0, 4, 0, 6, 3, 9, 2, 1, 1, 4, 2, 15, 0, 3, 5, 30, 7})
	f.Add([]byte("a longer seed that makes a few turns with several calls in each of them"))
	f.Fuzz(fuzzProject)
}

func fuzzProject(t *testing.T, data []byte) {
	{
		msgs := randomTranscript(data)
		// Without records: exactly the repaired transcript.
		view := Project(msgs, nil, "")
		if err := CheckPairing(view); err != nil {
			t.Fatalf("no record: %v", err)
		}
		if err := sameRequest(view, referenceRepair(msgs)); err != nil {
			t.Fatalf("no record: %v", err)
		}
		// A record at any Seq, even one splitting a pair.
		if len(msgs) > 0 {
			seq := int64(len(data)) % int64(len(msgs)+1)
			records := []Record{{UpToSeq: seq / 2, Summary: "a"}, {UpToSeq: seq, Summary: "b"}}
			v1 := Project(msgs, records, "L")
			if err := CheckPairing(v1); err != nil {
				t.Fatalf("record at %d: %v", seq, err)
			}
			if v2 := Project(msgs, records, "L"); !reflect.DeepEqual(v1, v2) {
				t.Fatal("Project is not deterministic")
			}
		}
		// Compactions Plan chooses never split a pair, and chain.
		var records []Record
		est := Approx
		for round := 0; round < 3; round++ {
			opts := Options{Window: 200 + len(data)%300, KeepRecentTokens: 20 + len(data)%50, Force: true}
			if prev := latest(records); prev != nil {
				opts.Previous = prev
			}
			cut, ok := Plan(msgs, est, opts)
			if !ok {
				break
			}
			checkCut(t, msgs, cut)
			if prev := latest(records); prev != nil && cut.UpToSeq <= prev.UpToSeq {
				t.Fatalf("round %d: cut up to %d, previous record up to %d", round, cut.UpToSeq, prev.UpToSeq)
			}
			records = append(records, Record{UpToSeq: cut.UpToSeq, Summary: "s"})
			view := CapToolResults(Project(msgs, records, "L"), opts.Window, 0.1, est)
			if err := CheckPairing(view); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			dropped, _ := DropOldest(view, opts.Window/2, est, "L")
			if err := CheckPairing(dropped); err != nil {
				t.Fatalf("round %d, DropOldest: %v", round, err)
			}
		}
	}
}
