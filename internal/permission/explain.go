package permission

import (
	"fmt"
	"strings"
)

// Explain renders a decision as text for `mx-claw permissions test` and
// the audit view: the verdict and its source, then one line per part
// (indented by depth) with its action and source, then the suggested
// rule. For `ls && rm -rf build`:
//
//	ask: "rm -rf build" needs approval: rm is not in the read-only set
//	  source: mode default
//	  allow  ls            read-only command
//	  ask    rm -rf build  mode default
//	                       (rm is not in the read-only set)
//	  suggested rule: run_command(rm -rf build)
func Explain(d Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", d.Action, d.Reason)
	fmt.Fprintf(&b, "  source: %s\n", d.Source)
	width := 0
	for _, pd := range d.Parts {
		width = max(width, len(pd.Subject)+2*pd.Part.Depth)
	}
	width = min(width, 60)
	for _, pd := range d.Parts {
		subject := strings.Repeat("  ", pd.Part.Depth) + oneLine(pd.Subject)
		fmt.Fprintf(&b, "  %-5s  %-*s  %s\n", pd.Action, width, subject, pd.Source)
		if why := partWhy(pd); pd.Action != Allow || why != "read-only command" && pd.Part.Kind != "" {
			fmt.Fprintf(&b, "         %-*s  (%s)\n", width, "", partWhy(pd))
		}
	}
	if d.Suggest != "" {
		fmt.Fprintf(&b, "  suggested rule: %s\n", d.Suggest)
	}
	return b.String()
}

// partWhy is the short explanation shown under a part.
func partWhy(pd PartDecision) string {
	if pd.Part.Reason != "" {
		return pd.Part.Reason
	}
	return pd.Reason
}

// oneLine squeezes newlines out of a subject for a table row.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}
