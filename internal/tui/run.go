package tui

import (
	"context"
	"io"
	"time"

	tea "charm.land/bubbletea/v2"
)

// Run runs the REPL on the terminal in and out until the user leaves. When
// it returns, the turn it started (if any) has been cancelled and has
// finished cleaning up, or a few seconds have passed.
func Run(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := New(ctx, opts)
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out))
	_, err := p.Run()
	cancel()
	m.Wait(5 * time.Second)
	if err == tea.ErrProgramKilled && ctx.Err() != nil {
		return nil
	}
	return err
}
