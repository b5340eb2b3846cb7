package compact

import (
	"strconv"
	"strings"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// SummaryHeader is the first line of the message that stands for the
// compacted part of a conversation in the view.
const SummaryHeader = "[Conversation summary — earlier messages were compacted]"

// Project returns the view the model sees of msgs, the stored transcript in
// Seq order, given the session's compaction records in the order they were
// made: the frozen context (the leading system messages), then — if there
// is a record — one user message (see [SummaryMessage]) with ledger and the
// latest record's summary, then every message with Seq greater than that
// record's UpToSeq, unchanged but repaired (each tool call followed by
// exactly one result, in call order; see [CheckPairing]).
//
// ledger is normally the latest record's Ledger; a fresh [Ledger] works as
// well, but changes the view's prefix whenever it changes. Project is a
// pure function: the same arguments give the same view. It estimates
// nothing and copies the messages once.
func Project(msgs []protocol.Message, records []Record, ledger string) []protocol.Message {
	rec := latest(records)
	frozen := frozenLen(msgs)
	start := keptStart(msgs, frozen, rec)
	out := make([]protocol.Message, 0, frozen+1+len(msgs)-start+4)
	out = append(out, msgs[:frozen]...)
	if rec != nil {
		out = append(out, SummaryMessage(rec, ledger))
	}
	return repairAppend(out, msgs[start:])
}

// SummaryMessage returns the message Project puts in place of the messages
// rec replaces: a user message (Seq 0) that starts with SummaryHeader and
// holds ledger, then rec's summary. Estimate it once per record for
// Options.PinnedTokens.
func SummaryMessage(rec *Record, ledger string) protocol.Message {
	var b strings.Builder
	summary := strings.TrimSpace(rec.Summary)
	ledger = strings.TrimSpace(ledger)
	b.Grow(len(SummaryHeader) + len(summary) + len(ledger) + 400)
	b.WriteString(SummaryHeader)
	b.WriteString("\nThe messages of this session up to seq ")
	b.WriteString(strconv.FormatInt(rec.UpToSeq, 10))
	b.WriteString(" are no longer shown; this note stands for them. The session keeps them all.\n")
	if ledger != "" {
		b.WriteString("The ledger below is derived from the session record, not written from memory: where it and the summary disagree, the ledger is right.\n\n")
		b.WriteString(ledger)
		b.WriteString("\n")
	}
	b.WriteString("\n## Summary of the earlier conversation\n\n")
	if summary == "" {
		summary = "(no summary)"
	}
	b.WriteString(summary)
	b.WriteString("\n")
	return protocol.Message{Role: protocol.RoleUser, Content: b.String()}
}

// isSummary reports whether m is a message SummaryMessage made.
func isSummary(m *protocol.Message) bool {
	return m.Seq == 0 && m.Role == protocol.RoleUser && strings.HasPrefix(m.Content, SummaryHeader)
}
