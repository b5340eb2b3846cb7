package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/catalog"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/skills"
	"github.com/mx-claw/mx-claw/internal/slashcmd"
)

// The REPL's memory, skills, context and custom commands (tui's
// ExtrasBackend), on the same App functions as the CLI's commands.

// commandsTTL is how long the list of custom commands is reused: Tab
// completion asks for it on every key press.
const commandsTTL = 2 * time.Second

// commandCache is the workspace's custom commands, as last found.
type commandCache struct {
	mu   sync.Mutex
	at   time.Time
	cmds []slashcmd.Command
}

func (b *Backend) commands(ctx context.Context) []slashcmd.Command {
	b.cmds.mu.Lock()
	defer b.cmds.mu.Unlock()
	if time.Since(b.cmds.at) < commandsTTL {
		return b.cmds.cmds
	}
	cmds, warnings := b.a.Commands(ctx, b.ws)
	for _, w := range warnings {
		b.a.log().Warn("custom commands", "warning", w)
	}
	b.cmds.cmds, b.cmds.at = cmds, time.Now()
	return cmds
}

// CustomCommands lists the workspace's custom slash commands.
func (b *Backend) CustomCommands(ctx context.Context) []protocol.SlashCommand {
	cmds := b.commands(ctx)
	out := make([]protocol.SlashCommand, len(cmds))
	for i, c := range cmds {
		out[i] = protocol.SlashCommand{Name: c.Name, ArgumentHint: c.ArgumentHint, Description: c.Description, Source: c.Source}
	}
	return out
}

// expandCommand turns a turn whose input is "/name args", a custom
// command of the workspace, into the command's turn: its prompt, its
// model and its allowed tools. Other input is left alone.
func (b *Backend) expandCommand(ctx context.Context, req *agent.TurnRequest, sink func(protocol.Event)) error {
	name, args, ok := slashcmd.Split(req.Input)
	if !ok {
		return nil
	}
	cmd, err := slashcmd.Find(b.commands(ctx), name)
	if err != nil {
		return nil
	}
	typed := req.Input
	if req.Input, err = b.a.CommandPrompt(ctx, b.ws, req.SessionID, cmd, args); err != nil {
		return err
	}
	req.Typed = typed
	if cmd.Model != "" {
		if m, err := b.a.ResolveModel(cmd.Model); err == nil {
			req.TurnModel = m.ID
		} else if sink != nil {
			sink(protocol.Event{Type: protocol.EventWarning, SessionID: req.SessionID,
				Text: fmt.Sprintf("command /%s names the model %s, which is not configured; using the session's", cmd.Name, cmd.Model)})
		}
	}
	for _, t := range cmd.AllowedTools {
		req.Grants = append(req.Grants, permission.Grant{Rule: t, Origin: "command /" + cmd.Name + " (allowed-tools)"})
	}
	return nil
}

// MemoryCommand runs /memory: no arguments lists the candidates; accept,
// reject and edit ID TEXT… act on one.
func (b *Backend) MemoryCommand(ctx context.Context, args []string) (string, error) {
	c := b.a.MemoryCandidates()
	if len(args) == 0 || args[0] == "candidates" || args[0] == "list" {
		list, warnings := c.List()
		var sb strings.Builder
		for _, w := range warnings {
			fmt.Fprintf(&sb, "warning: %s\n", w)
		}
		if len(list) == 0 {
			sb.WriteString("No memory candidates. Ask me to remember something (\"remember that …\") and it waits here for you.")
			return sb.String(), nil
		}
		sb.WriteString("Memory candidates (nothing reaches a prompt before you accept it):\n")
		for _, cand := range list {
			fmt.Fprintf(&sb, "  %s → %s  %s\n", cand.ID, cand.File, cand.Text)
		}
		sb.WriteString("/memory accept ID · /memory reject ID · /memory edit ID new text")
		return sb.String(), nil
	}
	if len(args) < 2 {
		return "", errors.New("usage: /memory [accept|reject ID | edit ID TEXT…]")
	}
	switch args[0] {
	case "accept":
		path, err := c.Accept(args[1])
		if err != nil {
			return "", err
		}
		return "Added to " + path + "; new sessions start with it.", nil
	case "reject":
		if err := c.Reject(args[1]); err != nil {
			return "", err
		}
		return "Dropped " + args[1] + ".", nil
	case "edit":
		if len(args) < 3 {
			return "", errors.New("usage: /memory edit ID new text")
		}
		cand, err := c.Edit(args[1], strings.Join(args[2:], " "), "")
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s → %s: %s", cand.ID, cand.File, cand.Text), nil
	}
	return "", fmt.Errorf("unknown /memory %s; use accept, reject or edit", args[0])
}

// SkillsCommand runs /skills: no arguments lists the session's skills and
// the proposals; proposed NAME prints one; accept and reject NAME act on
// one.
func (b *Backend) SkillsCommand(ctx context.Context, sessionID string, args []string) (string, error) {
	st := b.a.SkillStore()
	var sb strings.Builder
	switch {
	case len(args) == 0:
		fc, err := b.a.FrozenContext(ctx, sessionID)
		if err != nil {
			return "", err
		}
		if fc == nil {
			sb.WriteString("This session has not started yet; its skills are taken at its first message:\n")
			found, _ := b.a.Skills(ctx, b.ws)
			for _, s := range found {
				fmt.Fprintf(&sb, "  %s  %s\n", s.Name, s.Description)
			}
		} else {
			fmt.Fprintf(&sb, "Skills of this session (%d):\n", len(fc.Skills))
			for _, s := range fc.Skills {
				mark := " "
				if s.Listed {
					mark = "•"
				}
				fmt.Fprintf(&sb, "  %s %s  %s\n", mark, s.Name, s.Description)
			}
		}
		list, _ := st.Proposals()
		if len(list) > 0 {
			sb.WriteString("Proposed, waiting for you:\n")
			for _, p := range list {
				fmt.Fprintf(&sb, "  %s  %s\n", p.Name, p.Description)
			}
			sb.WriteString("/skills proposed NAME · /skills accept NAME · /skills reject NAME")
		}
		return strings.TrimRight(sb.String(), "\n"), nil
	case args[0] == "proposed" && len(args) == 1:
		list, _ := st.Proposals()
		if len(list) == 0 {
			return "No proposed skills.", nil
		}
		for _, p := range list {
			fmt.Fprintf(&sb, "%s  %s (from session %s)\n", p.Name, p.Description, p.Provenance.SessionID)
		}
		return strings.TrimRight(sb.String(), "\n"), nil
	case len(args) < 2:
		return "", errors.New("usage: /skills [proposed [NAME] | accept NAME | reject NAME]")
	}
	switch args[0] {
	case "proposed":
		p, err := st.Proposal(args[1])
		if err != nil {
			return "", err
		}
		doc, err := (skills.Skill{Dir: p.Dir}).Load()
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Proposed skill %s: %s\n\n%s", p.Name, p.Description, strings.TrimSpace(doc.Body)), nil
	case "accept":
		s, err := st.Accept(args[1])
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Skill %s is active; new sessions can load it.", s.Name), nil
	case "reject":
		if err := st.Reject(args[1]); err != nil {
			return "", err
		}
		return "Deleted the proposed skill " + args[1] + ".", nil
	}
	return "", fmt.Errorf("unknown /skills %s; use proposed, accept or reject", args[0])
}

// ContextReport describes what the session's system prompt holds (its
// parts, as stored at its first turn, or as a new session here would
// take them) and the estimated tokens of each, with the tools and the
// conversation.
func (b *Backend) ContextReport(ctx context.Context, sessionID string) (string, error) {
	sess, err := b.a.Store.GetSession(ctx, sessionID)
	if err != nil {
		return "", err
	}
	msgs, err := b.a.Store.Messages(ctx, sessionID, 0)
	if err != nil {
		return "", err
	}
	p, err := b.a.Core.PreviewPrompt(ctx, b.ws, sess.Model, agent.AskWait, "")
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	row := func(name, text string) int {
		n := catalog.Estimate(text)
		fmt.Fprintf(&sb, "  %-22s %7d bytes  ~%6d tokens\n", name, len(text), n)
		return n
	}
	total := 0
	if len(msgs) > 0 && msgs[0].Role == protocol.RoleSystem {
		sb.WriteString("System prompt, frozen at the session's first message:\n")
		for _, part := range splitPrompt(msgs[0].Content) {
			total += row(part.name, part.text)
		}
		if len(msgs) > 1 && msgs[1].Role == protocol.RoleSystem && !strings.HasPrefix(msgs[1].Content, "<environment-update>") {
			total += row("AGENTS.md", msgs[1].Content)
		}
	} else {
		sb.WriteString("System prompt a first message would freeze now:\n")
		for _, part := range splitPrompt(p.SystemPrompt) {
			total += row(part.name, part.text)
		}
		if p.Context != "" {
			total += row("AGENTS.md", p.Context)
		}
	}
	var tools bytes.Buffer
	for _, t := range p.Tools {
		tools.WriteString(t.Name + t.Description + string(t.Parameters))
	}
	total += row(fmt.Sprintf("tools (%d)", len(p.Tools)), tools.String())
	conv := 0
	for i := range msgs {
		if msgs[i].Role != protocol.RoleSystem || i > 1 {
			conv += catalog.EstimateMessage(&msgs[i])
		}
	}
	fmt.Fprintf(&sb, "  %-22s %7s        ~%6d tokens\n", "conversation", "", conv)
	fmt.Fprintf(&sb, "  %-22s %7s        ~%6d tokens", "total", "", total+conv)
	if m := b.a.model(sess.Model); m.ContextWindow > 0 {
		fmt.Fprintf(&sb, " of %d (%.0f%%)", m.ContextWindow, float64(total+conv)*100/float64(m.ContextWindow))
	}
	if fc, _ := b.a.FrozenContext(ctx, sessionID); fc != nil {
		for _, m := range fc.Memory {
			fmt.Fprintf(&sb, "\nmemory %s: %s (%d bytes", m.Label, m.Path, m.Bytes)
			if m.Cut {
				sb.WriteString(", cut to fit")
			}
			sb.WriteString(")")
		}
		listed := 0
		for _, s := range fc.Skills {
			if s.Listed {
				listed++
			}
		}
		if len(fc.Skills) > 0 {
			fmt.Fprintf(&sb, "\nskills: %d listed in the prompt, %d in all (/skills lists them)", listed, len(fc.Skills))
		}
	}
	return sb.String(), nil
}

// promptPart is a named part of a system prompt.
type promptPart struct{ name, text string }

// splitPrompt cuts a system prompt into its sections by their headings:
// instructions, environment, memory, skills, and what SessionStart hooks
// added.
func splitPrompt(prompt string) []promptPart {
	marks := []struct{ name, head string }{
		{"environment", "\n# Environment\n<environment>"},
		{"memory", "\n# Memory\n<memory>"},
		{"skills", "\n# Skills\n"},
	}
	var parts []promptPart
	rest, name := prompt, "instructions"
	for _, m := range marks {
		i := strings.Index(rest, m.head)
		if i < 0 {
			continue
		}
		parts = append(parts, promptPart{name, rest[:i+1]})
		rest, name = rest[i+1:], m.name
	}
	return append(parts, promptPart{name, rest})
}
