package protocol

import "time"

// EventImportNote keeps, in an imported session, a record of the other
// agent's session that maps onto no message (Text is the record as it was
// read, Summary says what it is). The model never sees it.
const EventImportNote EventType = "import.note"

// SearchHit is one message found by a session search.
type SearchHit struct {
	SessionID string    `json:"sessionId"`
	Title     string    `json:"title"`
	Workspace string    `json:"workspace"`
	UpdatedAt time.Time `json:"updatedAt"`
	Seq       int64     `json:"seq"`
	Role      Role      `json:"role"`
	// Snippet is the matching part of the message, the matched words
	// between ** marks.
	Snippet string `json:"snippet"`
	// Rank orders hits: lower is better (SQLite FTS5's bm25; on
	// PostgreSQL, ts_rank negated). It is 0 for a query matching too many
	// messages to rank, whose hits are the newest matches.
	Rank float64 `json:"rank"`
}
