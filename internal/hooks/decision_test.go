package hooks

import (
	"testing"

	"github.com/mx-claw/mx-claw/internal/permission"
)

func TestCombine(t *testing.T) {
	t.Parallel()
	const (
		allow = permission.Allow
		ask   = permission.Ask
		deny  = permission.Deny
	)
	tests := []struct {
		rule permission.Action
		hook Decision
		want permission.Action
	}{
		{allow, None, allow},
		{allow, Allow, allow},
		{allow, Ask, ask}, // a hook may tighten
		{allow, Deny, deny},
		{allow, Block, deny},
		{ask, None, ask},
		{ask, Allow, allow}, // the only thing a hook may lift: an ask
		{ask, Ask, ask},
		{ask, Deny, deny},
		{ask, Block, deny},
		{deny, None, deny},
		{deny, Allow, deny}, // never over a deny
		{deny, Ask, deny},
		{deny, Deny, deny},
		{deny, Block, deny},
		{"", Allow, deny},           // an unknown rule action fails closed
		{"maybe", Allow, deny},      // …
		{allow, "whatever", deny},   // an unknown hook decision too
		{ask, Decision("ok"), deny}, // …
	}
	for _, tc := range tests {
		if got := Combine(tc.rule, tc.hook); got != tc.want {
			t.Errorf("Combine(%q, %q) = %q, want %q", tc.rule, tc.hook, got, tc.want)
		}
	}
	// The guarantee, over every pair: a deny stays a deny, and the result
	// is never looser than the rule except for ask → allow by a hook's
	// allow.
	for _, rule := range []permission.Action{allow, ask, deny, ""} {
		for _, hook := range []Decision{None, Allow, Ask, Deny, Block} {
			got := Combine(rule, hook)
			if rule != allow && rule != ask && got != deny {
				t.Errorf("Combine(%q, %q) = %q lifts a deny", rule, hook, got)
			}
			if rule == ask && got == allow && hook != Allow {
				t.Errorf("Combine(%q, %q) = %q: only a hook's allow lifts an ask", rule, hook, got)
			}
		}
	}
}
