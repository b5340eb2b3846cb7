package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/mcpserve"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

func newMCPServeCmd(stdio IO) *cobra.Command {
	var cwd, mode string
	var yolo bool
	var maxIter int
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve mx-claw to other agents as an MCP server over stdio",
		Long: `Speaks MCP on standard input and output. Tools: run_task (run a task in a
workspace; returns the final answer and the session id), list_sessions and
read_transcript. Tasks run like ` + "`mx-claw run`" + `: the same permission settings, and
calls that need approval are denied, since nobody can answer them here.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			flags := permFlags{mode: mode, yolo: yolo, onAsk: "deny"}
			m, _, err := flags.options()
			if err != nil {
				return err
			}
			if maxIter < 0 {
				return usagef("--max-iterations must be positive, got %d", maxIter)
			}
			ws, err := workspaceDir(cwd)
			if err != nil {
				return err
			}
			a, err := openApp(cmd.Context(), app.Options{MaxIterations: maxIter, Mode: m})
			if err != nil {
				return err
			}
			defer a.Close()
			b := &serveBackend{a: a, workspace: ws}
			return mcpserve.Serve(cmd.Context(), b, mcpserve.Options{Version: Version},
				io.NopCloser(stdio.In), nopWriteCloser{stdio.Out})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cwd, "cwd", "", "default workspace of run_task (default: the current directory)")
	fl.StringVar(&mode, "permission-mode", "", "permission mode: default, acceptEdits, plan or bypass (default: settings, else default)")
	fl.BoolVar(&yolo, "yolo", false, "same as --permission-mode bypass")
	fl.IntVar(&maxIter, "max-iterations", 0, "maximum model steps of a task (default 8)")
	return cmd
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// serveBackend runs `mcp serve`'s tools on the app.
type serveBackend struct {
	a         *app.App
	workspace string
}

func (b *serveBackend) RunTask(ctx context.Context, req mcpserve.TaskRequest) (mcpserve.TaskResult, error) {
	a := b.a
	var sess *protocol.Session
	var err error
	if req.SessionID != "" {
		if sess, err = a.Store.GetSession(ctx, req.SessionID); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return mcpserve.TaskResult{}, fmt.Errorf("session %s does not exist; list_sessions shows the sessions", req.SessionID)
			}
			return mcpserve.TaskResult{}, err
		}
	}
	modelID := req.Model
	if modelID == "" && sess != nil {
		modelID = sess.Model
	}
	model, err := a.ResolveModel(modelID)
	if err != nil {
		return mcpserve.TaskResult{}, err
	}
	if sess == nil {
		ws := b.workspace
		if req.Workspace != "" {
			if ws, err = workspaceDir(req.Workspace); err != nil {
				return mcpserve.TaskResult{}, err
			}
		}
		if sess, err = a.Core.CreateSession(ctx, ws, model.ID, nil); err != nil {
			return mcpserve.TaskResult{}, err
		}
	}
	var answer string
	sink := func(e protocol.Event) {
		if e.Type == protocol.EventMessageCompleted && e.Message != nil && e.Message.Role == protocol.RoleAssistant {
			answer = e.Message.Content
		}
	}
	runErr := a.Core.Run(ctx, agent.TurnRequest{SessionID: sess.ID, Input: req.Prompt, Model: model.ID,
		MaxIterations: req.MaxIterations, OnAsk: agent.AskDeny, Budget: a.Budget()}, sink)
	res := mcpserve.TaskResult{SessionID: sess.ID, Answer: answer}
	if runErr != nil {
		res.Error = runErr.Error()
	}
	if s, err := a.Store.GetSession(context.WithoutCancel(ctx), sess.ID); err == nil {
		res.Status = string(s.Status)
	}
	return res, nil
}

func (b *serveBackend) Sessions(ctx context.Context, workspace string, limit int) ([]protocol.Session, error) {
	opts := store.ListOptions{Limit: limit}
	if workspace != "" {
		ws, err := workspaceDir(workspace)
		if err != nil {
			return nil, err
		}
		opts.Workspace = ws
	}
	return b.a.Store.ListSessions(ctx, opts)
}

func (b *serveBackend) Transcript(ctx context.Context, id string) (*protocol.Session, []protocol.Message, error) {
	sess, err := b.a.Store.GetSession(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, fmt.Errorf("session %s does not exist; list_sessions shows the sessions", id)
	}
	if err != nil {
		return nil, nil, err
	}
	msgs, err := b.a.Store.Messages(ctx, id, 0)
	return sess, msgs, err
}
