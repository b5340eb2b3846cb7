package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/mx-claw/mx-claw/internal/app"
)

// doctorRepair is `mx-claw doctor --repair`: it runs app.Repair and says
// what it found and did. It exits 1 only when the database file itself is
// damaged (SQLite's check failed), which it cannot mend.
func doctorRepair(ctx context.Context, w io.Writer) error {
	a, err := openApp(ctx, app.Options{})
	if err != nil {
		return err
	}
	defer a.Close()
	r, err := a.Repair(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Repairing %s\n", a.Home)
	if len(r.Integrity) == 0 {
		fmt.Fprintln(w, "Database:       sound (SQLite quick_check)")
	} else {
		fmt.Fprintln(w, "Database:       DAMAGED; restore it from a backup or move it away to start afresh:")
		for _, l := range r.Integrity {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	fmt.Fprintf(w, "Sessions read:  %d\n", r.Sessions)
	list := func(label string, items []string, none string) {
		if len(items) == 0 {
			fmt.Fprintf(w, "%-15s %s\n", label+":", none)
			return
		}
		fmt.Fprintf(w, "%-15s %d\n", label+":", len(items))
		for _, it := range items {
			fmt.Fprintf(w, "  %s\n", it)
		}
	}
	list("Unreadable", r.Saved, "none (every record decodes)")
	list("Interrupted", r.Recovered, "none (no session left running)")
	list("Stale temp files", r.TempFiles, "none")
	list("Old outputs", r.Outputs, "none")
	if len(r.Saved) > 0 {
		fmt.Fprintln(w, "Unreadable records were set aside and saved to the files above; their sessions no longer warn.")
	}
	if len(r.Integrity) > 0 {
		return &exitError{code: ExitFailed, err: fmt.Errorf("doctor --repair: the database file is damaged")}
	}
	return nil
}
