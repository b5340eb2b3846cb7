package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/config"
)

// doctorStore prints which session store is in use and, for PostgreSQL,
// whether it can be reached; it returns a problem to report, if any.
func doctorStore(ctx context.Context, w io.Writer, home string, cfg *config.Config) string {
	line := func(label, format string, args ...any) {
		fmt.Fprintf(w, "%-15s %s\n", label+":", fmt.Sprintf(format, args...))
	}
	c, err := app.ChooseStore(home, cfg)
	if err != nil {
		line("Store", "error: %v", err)
		return "the store setting is wrong"
	}
	if c.Postgres == "" {
		line("Store", "%s%s", c, fileState(c.Path, 0o600))
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := c.Open(ctx)
	if err != nil {
		line("Store", "%s: %v", c, err)
		return "the store cannot be opened"
	}
	st.Close()
	line("Store", "%s (reachable)", c)
	return ""
}
