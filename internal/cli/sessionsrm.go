package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/store"
)

// newSessionsRmCmd is `mx-claw sessions rm ID...`.
func newSessionsRmCmd(stdio IO) *cobra.Command {
	return &cobra.Command{
		Use:   "rm ID...",
		Short: "Remove sessions, with the command outputs kept for them",
		Long: `Removes each session from the store — its transcript, events, pending
approvals, queued messages and grants — and the whole outputs of its commands
kept under $MX_CLAW_HOME/outputs/. The audit log of permission decisions is
kept. A session a turn is running on is refused.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := config.Home()
			if err != nil {
				return usageErr(err)
			}
			return withStore(cmd.Context(), func(st store.Store) error {
				return removeSessions(cmd.Context(), stdio, st, home, args)
			})
		},
	}
}

// removeSessions removes each session, going on past one that cannot be
// removed; the error names every one that was not.
func removeSessions(ctx context.Context, stdio IO, st store.Store, home string, ids []string) error {
	var errs []error
	for _, id := range ids {
		err := app.RemoveSession(ctx, st, home, id)
		var busy *store.LeaseHeldError
		switch {
		case err == nil:
			fmt.Fprintf(stdio.Out, "Removed session %s.\n", id)
		case errors.Is(err, store.ErrNotFound):
			errs = append(errs, fmt.Errorf("no session %s", id))
		case errors.As(err, &busy):
			errs = append(errs, fmt.Errorf("session %s is busy (a turn runs in %s); cancel it first", id, busy.Owner))
		default:
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
