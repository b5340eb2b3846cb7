package permission

import (
	"fmt"
	"strings"
)

// Mode is a permission mode: how calls no rule speaks for are decided.
type Mode string

// The permission modes (DESIGN §7).
const (
	// ModeDefault allows reads and read-only commands and asks for edits
	// and other commands.
	ModeDefault Mode = "default"
	// ModeAcceptEdits is ModeDefault that also allows edits of paths inside
	// the workspace.
	ModeAcceptEdits Mode = "acceptEdits"
	// ModePlan is read-only: writes and commands that are not read-only are
	// denied with guidance to describe the change instead.
	ModePlan Mode = "plan"
	// ModeBypass allows everything except what deny rules, ask rules and
	// hard checks (catastrophic commands, unresolvable commands) stop.
	ModeBypass Mode = "bypass"
)

// Modes returns the valid modes, tightest first.
func Modes() []Mode { return []Mode{ModePlan, ModeDefault, ModeAcceptEdits, ModeBypass} }

// ParseMode returns the mode named s. "bypassPermissions" (Claude Code's
// name) is accepted for bypass. An empty or unknown name is an error
// matching ErrInvalidMode that lists the valid modes.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "default", "acceptEdits", "plan", "bypass":
		return Mode(s), nil
	case "bypassPermissions":
		return ModeBypass, nil
	}
	names := make([]string, 0, 4)
	for _, m := range Modes() {
		names = append(names, string(m))
	}
	return "", fmt.Errorf("%w %q (valid: %s)", ErrInvalidMode, s, strings.Join(names, ", "))
}

// String returns the mode's name; the empty mode is "default".
func (m Mode) String() string { return string(m.orDefault()) }

// looseness orders modes from tightest (0) to loosest; unknown modes count
// as default.
func (m Mode) looseness() int {
	switch m {
	case ModePlan:
		return 0
	case ModeAcceptEdits:
		return 2
	case ModeBypass:
		return 3
	}
	return 1
}

// orDefault returns m, or ModeDefault for the empty mode.
func (m Mode) orDefault() Mode {
	if m == "" {
		return ModeDefault
	}
	return m
}

// Action is what a decision says to do with a call.
type Action string

// The actions, from most to least permissive.
const (
	// Allow runs the call.
	Allow Action = "allow"
	// Ask pauses for the user's approval.
	Ask Action = "ask"
	// Deny refuses the call; the model is told why.
	Deny Action = "deny"
)

// severity orders actions: allow < ask < deny.
func (a Action) severity() int {
	switch a {
	case Allow:
		return 0
	case Ask:
		return 1
	}
	return 2
}
