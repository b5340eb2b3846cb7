package hooks

import "github.com/mx-claw/mx-claw/internal/permission"

// Decision is what the hooks of an event said, folded into one.
type Decision string

// The decisions, from weakest to strongest.
const (
	// None means no hook expressed an opinion.
	None Decision = ""
	// Allow means a PreToolUse hook approved the call ("approve", or
	// permissionDecision "allow"); see Combine for what that may lift.
	Allow Decision = "allow"
	// Ask means a PreToolUse hook wants the user asked
	// (permissionDecision "ask").
	Ask Decision = "ask"
	// Deny means a PreToolUse hook refused the call (permissionDecision
	// "deny").
	Deny Decision = "deny"
	// Block means a hook blocked (exit status 2, or "decision": "block");
	// what that stops depends on the event (see the package doc).
	Block Decision = "block"
)

// strength orders decisions: None < Allow < Ask < Deny < Block.
func (d Decision) strength() int {
	switch d {
	case None:
		return 0
	case Allow:
		return 1
	case Ask:
		return 2
	case Deny:
		return 3
	}
	return 4
}

// refuses reports whether d is Deny or Block.
func (d Decision) refuses() bool { return d == Deny || d == Block }

// Combine returns the action for a tool call given ruleAction, what
// permissions decided (rules, mode and hard checks, on the input that will
// run), and hook, what the PreToolUse hooks decided. A hook can tighten
// anything (ask, deny, block) but never lift a deny: a Deny rule action
// stays Deny whatever the hook said. A hook's Allow turns an Ask into an
// Allow; callers whose ask must stand regardless (permission's asks for
// commands it cannot judge) should not pass the hook's Allow for it. An
// unknown rule action is treated as Deny. If the result differs from
// ruleAction, the hook made the decision (for the audit's source).
func Combine(ruleAction permission.Action, hook Decision) permission.Action {
	switch ruleAction {
	case permission.Allow, permission.Ask:
	default:
		return permission.Deny
	}
	switch hook {
	case None:
		return ruleAction
	case Allow:
		return permission.Allow
	case Ask:
		return permission.Ask
	}
	return permission.Deny // Deny, Block and anything unknown
}
