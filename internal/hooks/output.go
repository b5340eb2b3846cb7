package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// outcome is what one hook said.
type outcome struct {
	decision     Decision
	reason       string
	updatedInput json.RawMessage
	context      string
	halt         bool
	stopReason   string
	warnings     []string
}

// output is the JSON a hook may print on stdout (Claude Code's shape).
// Unknown fields are ignored, so hooks written for newer Claude Code
// versions still work.
type output struct {
	Continue       *bool  `json:"continue"`
	StopReason     string `json:"stopReason"`
	SuppressOutput bool   `json:"suppressOutput"`
	SystemMessage  string `json:"systemMessage"`
	// Decision is "block" or the older "approve"; anything else is
	// ignored with a warning.
	Decision           any             `json:"decision"`
	Reason             string          `json:"reason"`
	HookSpecificOutput *specificOutput `json:"hookSpecificOutput"`
}

// specificOutput is output's hookSpecificOutput.
type specificOutput struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision"`
	PermissionDecisionReason string          `json:"permissionDecisionReason"`
	UpdatedInput             json.RawMessage `json:"updatedInput"`
	AdditionalContext        string          `json:"additionalContext"`
	// Decision is PermissionRequest's answer.
	Decision *permissionAnswer `json:"decision"`
}

// permissionAnswer is a PermissionRequest hook's decision.
type permissionAnswer struct {
	Behavior     string          `json:"behavior"`
	Message      string          `json:"message"`
	UpdatedInput json.RawMessage `json:"updatedInput"`
	Interrupt    bool            `json:"interrupt"`
}

// canBlock reports whether a block means something for ev.
func canBlock(ev EventName) bool {
	switch ev {
	case PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure, UserPromptSubmit, Stop, SubagentStop:
		return true
	}
	return false
}

// blocked is the outcome of a hook that blocked ev with reason (exit 2 or
// "decision": "block"); where blocking means nothing it is a warning.
func blocked(ev EventName, label, reason string) outcome {
	if !canBlock(ev) {
		if reason == "" {
			return outcome{warnings: []string{fmt.Sprintf("hook %q: a %s hook cannot block", label, ev)}}
		}
		return outcome{warnings: []string{fmt.Sprintf("hook %q: %s", label, firstLines(reason))}}
	}
	if reason == "" {
		reason = fmt.Sprintf("blocked by hook %q", label)
	}
	return outcome{decision: Block, reason: reason}
}

// interpret reads the stdout of a hook for ev that exited 0.
func interpret(ev EventName, label, stdout string) outcome {
	text := strings.TrimSpace(stdout)
	if !strings.HasPrefix(text, "{") {
		return plain(ev, text)
	}
	var out output
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		o := plain(ev, text)
		o.warnings = append(o.warnings, fmt.Sprintf("hook %q: stdout looks like JSON but is not: %v", label, err))
		return o
	}
	var o outcome
	warn := func(format string, args ...any) {
		o.warnings = append(o.warnings, fmt.Sprintf("hook %q: ", label)+fmt.Sprintf(format, args...))
	}
	if out.Continue != nil && !*out.Continue {
		o.halt, o.stopReason = true, out.StopReason
	}
	if out.SystemMessage != "" {
		warn("%s", out.SystemMessage)
	}
	switch d := out.Decision; d {
	case nil, "", "undefined":
	case "block":
		b := blocked(ev, label, out.Reason)
		o.decision, o.reason = b.decision, b.reason
		o.warnings = append(o.warnings, b.warnings...)
	case "approve":
		// The older spelling of permissionDecision "allow".
		if ev == PreToolUse {
			o.decision, o.reason = Allow, out.Reason
		}
	default:
		if _, isObject := d.(map[string]any); !isObject || ev != PermissionRequest {
			warn(`unknown "decision" %v ignored (valid: "block", "approve")`, d)
		}
	}
	if s := out.HookSpecificOutput; s != nil {
		if s.HookEventName != "" && s.HookEventName != string(ev) {
			warn("hookSpecificOutput for %s ignored in a %s hook", s.HookEventName, ev)
			return o
		}
		specific(ev, s, &o, warn)
	}
	return o
}

// specific applies hookSpecificOutput s of a hook for ev to o.
func specific(ev EventName, s *specificOutput, o *outcome, warn func(string, ...any)) {
	if s.PermissionDecision != "" {
		d := map[string]Decision{"allow": Allow, "ask": Ask, "deny": Deny}[s.PermissionDecision]
		switch {
		case ev != PreToolUse:
			warn("permissionDecision is ignored in a %s hook", ev)
		case d == None:
			warn(`unknown permissionDecision %q ignored (valid: "allow", "deny", "ask")`, s.PermissionDecision)
		case d.strength() >= o.decision.strength():
			// permissionDecision takes precedence over the older
			// "decision" field, except that it cannot undo a block.
			o.decision, o.reason = d, s.PermissionDecisionReason
			if d == Deny && o.reason == "" {
				o.reason = "denied by a PreToolUse hook"
			}
		}
	}
	if a := s.Decision; a != nil {
		switch {
		case ev != PermissionRequest:
			warn("hookSpecificOutput.decision is ignored in a %s hook", ev)
		case a.Behavior == "allow" && o.decision.strength() <= Allow.strength():
			o.decision, o.reason = Allow, a.Message
			s.UpdatedInput = a.UpdatedInput
		case a.Behavior == "deny":
			o.decision, o.reason = Deny, a.Message
			if o.reason == "" {
				o.reason = "denied by a PermissionRequest hook"
			}
			if a.Interrupt {
				o.halt = true
			}
		case a.Behavior != "allow":
			warn(`unknown decision.behavior %q ignored (valid: "allow", "deny")`, a.Behavior)
		}
	}
	if in := bytes.TrimSpace(s.UpdatedInput); len(in) > 0 && string(in) != "null" {
		switch {
		case ev != PreToolUse && ev != PermissionRequest:
			warn("updatedInput is ignored in a %s hook", ev)
		case in[0] != '{':
			warn("updatedInput ignored: it must be a JSON object")
		default:
			o.updatedInput = append(json.RawMessage(nil), in...)
		}
	}
	if c := strings.TrimSpace(s.AdditionalContext); c != "" {
		o.context = c
	}
}

// plain reads non-JSON stdout: additional context for the events whose
// plain output Claude Code gives the model, nothing elsewhere.
func plain(ev EventName, text string) outcome {
	if text != "" && (ev == UserPromptSubmit || ev == SessionStart) {
		return outcome{context: text}
	}
	return outcome{}
}

// firstLines returns the first few lines of s, trimmed and bounded, for a
// warning.
func firstLines(s string) string {
	const maxLines, maxBytes = 5, 500
	s = strings.TrimSpace(s)
	lines := strings.SplitN(s, "\n", maxLines+1)
	more := len(lines) > maxLines
	if more {
		lines = lines[:maxLines]
	}
	out := strings.Join(lines, "\n")
	if len(out) > maxBytes {
		out = strings.ToValidUTF8(out[:maxBytes], "")
		more = true
	}
	if more {
		out += " …"
	}
	return out
}
