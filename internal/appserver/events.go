package appserver

import "github.com/mx-claw/mx-claw/internal/protocol"

// methods maps each event type onto the method of its notification, in
// codex's slash-separated shape; the params are always the event itself.
// This is the one mapping from protocol.Events to the app server's wire.
var methods = map[protocol.EventType]string{
	protocol.EventSessionCreated:      "thread/started",
	protocol.EventSessionUpdated:      "thread/status/changed",
	protocol.EventTurnStarted:         "turn/started",
	protocol.EventTurnCompleted:       "turn/completed",
	protocol.EventTurnFailed:          "turn/failed",
	protocol.EventTurnCancelled:       "turn/interrupted",
	protocol.EventTurnPaused:          "turn/paused",
	protocol.EventMessageDelta:        "item/agentMessage/delta",
	protocol.EventReasoningDelta:      "item/reasoning/delta",
	protocol.EventMessageCompleted:    "item/message/completed",
	protocol.EventToolStarted:         "item/tool/started",
	protocol.EventToolOutput:          "item/tool/outputDelta",
	protocol.EventToolCompleted:       "item/tool/completed",
	protocol.EventPermissionRequested: "item/tool/approvalRequested",
	protocol.EventPermissionResolved:  "item/tool/approvalResolved",
	protocol.EventUsage:               "thread/tokenUsage/updated",
	protocol.EventCompaction:          "thread/compacted",
	protocol.EventInputQueued:         "thread/input/queued",
	protocol.EventTodoUpdated:         "turn/plan/updated",
	protocol.EventWarning:             "thread/warning",
	protocol.EventHookWarning:         "thread/hookWarning",
	protocol.EventRetry:               "turn/retry",
}

// fallbackMethod carries events of a type this table does not know yet.
const fallbackMethod = "thread/event"

// methodOf returns the notification method of an event type.
func methodOf(t protocol.EventType) string {
	if m, ok := methods[t]; ok {
		return m
	}
	return fallbackMethod
}

// requestApproval is the server's request for an approval.
const requestApproval = "item/tool/requestApproval"
