package compact

import "time"

// The triggers a Record may have.
const (
	// TriggerAuto marks a compaction made because the view exceeded the
	// threshold.
	TriggerAuto = "auto"
	// TriggerManual marks a compaction the user asked for (/compact).
	TriggerManual = "manual"
)

// Record is one compaction as the store keeps it: the messages of the
// transcript with Seq <= UpToSeq (after the frozen context) are shown to the
// model as Summary and Ledger instead. The transcript itself keeps every
// message. Records chain: each summary covers everything its predecessor
// covered (the previous summary is part of the summarisation request).
type Record struct {
	// ID identifies the record in the store.
	ID string `json:"id"`
	// UpToSeq is the Seq of the last message the record replaces.
	UpToSeq int64 `json:"upToSeq"`
	// Summary is the model's handover note for the replaced messages.
	Summary string `json:"summary"`
	// Ledger is the pinned ledger made when the record was (see [Ledger]).
	// Keeping it with the record means the view between two compactions
	// never changes its prefix (which keeps the provider's prompt cache
	// warm) and a resumed session rebuilds the same bytes even if the
	// ledger's derivation changes between versions.
	Ledger string `json:"ledger,omitempty"`
	// CreatedAt is when the record was made.
	CreatedAt time.Time `json:"createdAt"`
	// Trigger is TriggerAuto or TriggerManual.
	Trigger string `json:"trigger"`
	// Instructions are what the user added to a manual compaction
	// (/compact focus on the failing test).
	Instructions string `json:"instructions,omitempty"`
}

// latest returns the record the view is built from: the last of records,
// which are in the order they were made, or nil.
func latest(records []Record) *Record {
	if len(records) == 0 {
		return nil
	}
	return &records[len(records)-1]
}
