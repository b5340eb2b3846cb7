package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/catalog"
	"github.com/mx-claw/mx-claw/internal/llm"
)

func newDebugCmd(stdio IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "debug",
		Short: "Look inside mx-claw",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newDebugPromptCmd(stdio))
	return cmd
}

type debugPromptFlags struct {
	cwd, model, mode, approvals, first string
	yolo, json                         bool
}

func newDebugPromptCmd(stdio IO) *cobra.Command {
	var f debugPromptFlags
	cmd := &cobra.Command{
		Use:   "prompt",
		Short: "Show the system prompt and tools a new session would send",
		Long: `Show exactly what the first request of a new session in the workspace
would carry before the user's message: the system prompt (instructions,
environment, memory and skill index), the AGENTS.md files, and the tool
schemas, with the size of each part. Nothing is sent and no session is created; SessionStart hooks are not
run, so what they would add is not shown.

--json prints the system messages and the tools as they are sent, with the
sizes, as one JSON object.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return debugPrompt(cmd.Context(), stdio.Out, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.cwd, "cwd", "", "workspace directory (default: the current directory)")
	fl.StringVar(&f.model, "model", "", "model, as provider/model (default: the configured one)")
	fl.StringVar(&f.mode, "permission-mode", "", "permission mode: default, acceptEdits, plan or bypass (default: settings, else default)")
	fl.BoolVar(&f.yolo, "yolo", false, "same as --permission-mode bypass")
	fl.StringVar(&f.approvals, "approvals", "interactive", "how approvals are answered: interactive (the REPL), deny or pause (mx-claw run --on-ask)")
	fl.BoolVar(&f.json, "json", false, "print one JSON object")
	fl.StringVar(&f.first, "message", "", "the first message, which ranks the skills when there are more than the index lists")
	return cmd
}

// promptPart is one part of the first request and its size.
type promptPart struct {
	Name  string `json:"name"`
	Bytes int    `json:"bytes"`
	// Tokens is mx-claw's estimate.
	Tokens int `json:"tokens"`
}

// promptDump is what `debug prompt --json` prints.
type promptDump struct {
	Workspace string            `json:"workspace"`
	Model     string            `json:"model"`
	Messages  []llm.Message     `json:"messages"`
	Tools     []json.RawMessage `json:"tools"`
	Parts     []promptPart      `json:"parts"`
	Total     promptPart        `json:"total"`
	Warnings  []string          `json:"warnings,omitempty"`
}

func debugPrompt(ctx context.Context, w io.Writer, f debugPromptFlags) error {
	pf := permFlags{mode: f.mode, yolo: f.yolo}
	mode, _, err := pf.options()
	if err != nil {
		return err
	}
	var onAsk agent.AskPolicy
	switch f.approvals {
	case "interactive":
		onAsk = agent.AskWait
	case "deny":
		onAsk = agent.AskDeny
	case "pause":
		onAsk = agent.AskPause
	default:
		return usagef("--approvals %q: want interactive, deny or pause", f.approvals)
	}
	ws, err := workspaceDir(f.cwd)
	if err != nil {
		return err
	}
	a, err := openApp(ctx, app.Options{Mode: mode})
	if err != nil {
		return err
	}
	defer a.Close()
	// The model need not be ready (no key yet): only its name and window
	// go into the prompt.
	ref, err := a.Config.Resolve(f.model)
	if err != nil {
		return usageErr(err)
	}
	p, err := a.Core.PreviewPrompt(ctx, ws, ref.String(), onAsk, f.first)
	if err != nil {
		return err
	}
	d := promptDump{Workspace: ws, Model: ref.String(), Warnings: p.Warnings}
	part := func(name, text string) promptPart {
		return promptPart{Name: name, Bytes: len(text), Tokens: catalog.Estimate(text)}
	}
	d.Messages = append(d.Messages, llm.Message{Role: "system", Content: p.SystemPrompt})
	if p.Prompt.Instructions != "" {
		d.Parts = append(d.Parts, part("instructions", p.Prompt.Instructions), part("environment", p.Prompt.Environment))
		if p.Prompt.Memory != "" {
			d.Parts = append(d.Parts, part("memory", p.Prompt.Memory))
		}
		if p.Prompt.Skills != "" {
			d.Parts = append(d.Parts, part("skills", p.Prompt.Skills))
		}
	} else {
		d.Parts = append(d.Parts, part("system prompt", p.SystemPrompt))
	}
	if strings.TrimSpace(p.Context) != "" {
		d.Messages = append(d.Messages, llm.Message{Role: "system", Content: p.Context})
		d.Parts = append(d.Parts, part("AGENTS.md", p.Context))
	}
	for _, t := range p.Tools {
		// The shape of a tool in an OpenAI chat request.
		raw, err := json.Marshal(map[string]any{"type": "function", "function": map[string]any{
			"name": t.Name, "description": t.Description, "parameters": json.RawMessage(t.Parameters)}})
		if err != nil {
			return err
		}
		d.Tools = append(d.Tools, raw)
		d.Parts = append(d.Parts, part("tool "+t.Name, string(raw)))
	}
	d.Total.Name = "total"
	for _, pp := range d.Parts {
		d.Total.Bytes += pp.Bytes
		d.Total.Tokens += pp.Tokens
	}
	if f.json {
		return writeJSON(w, d)
	}
	return writePromptText(w, &d)
}

// writePromptText prints the sizes, then the system messages, then the
// tools' names and descriptions.
func writePromptText(w io.Writer, d *promptDump) error {
	fmt.Fprintf(w, "Workspace %s\nModel     %s\n\n", d.Workspace, d.Model)
	toolBytes, toolTokens, nTools := 0, 0, 0
	for _, p := range d.Parts {
		if strings.HasPrefix(p.Name, "tool ") {
			toolBytes += p.Bytes
			toolTokens += p.Tokens
			nTools++
		}
	}
	for _, p := range d.Parts {
		if !strings.HasPrefix(p.Name, "tool ") {
			fmt.Fprintf(w, "%-22s %7d bytes  ~%6d tokens\n", p.Name, p.Bytes, p.Tokens)
		}
	}
	fmt.Fprintf(w, "%-22s %7d bytes  ~%6d tokens\n", fmt.Sprintf("tools (%d)", nTools), toolBytes, toolTokens)
	for _, p := range d.Parts {
		if name, ok := strings.CutPrefix(p.Name, "tool "); ok {
			fmt.Fprintf(w, "  %-20s %7d bytes  ~%6d tokens\n", name, p.Bytes, p.Tokens)
		}
	}
	fmt.Fprintf(w, "%-22s %7d bytes  ~%6d tokens, before the user's message\n", d.Total.Name, d.Total.Bytes, d.Total.Tokens)
	for _, warn := range d.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	for i, m := range d.Messages {
		title := "system prompt"
		if i > 0 {
			title = "AGENTS.md"
		}
		fmt.Fprintf(w, "\n===== %s =====\n%s", title, m.Content)
		if !strings.HasSuffix(m.Content, "\n") {
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w, "\n===== tools (schemas: --json) =====")
	for _, raw := range d.Tools {
		var t struct {
			Function struct{ Name, Description string } `json:"function"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return err
		}
		fmt.Fprintf(w, "\n--- %s\n%s\n", t.Function.Name, t.Function.Description)
	}
	return nil
}
