package app

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/hooks"
	"github.com/mx-claw/mx-claw/internal/mcp"
	"github.com/mx-claw/mx-claw/internal/memory"
	"github.com/mx-claw/mx-claw/internal/plugins"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/skills"
	"github.com/mx-claw/mx-claw/internal/slashcmd"
)

// What a session brings beyond the model and the tools (DESIGN §9): the
// user's long-term memory, skills, custom slash commands and plugins.
// Everything a workspace contributes (.mx-claw/MEMORY.md, its skills and
// commands) counts only once the user trusts the workspace; a plugin's
// parts only once the user enabled it.

// SkillsDirName is the folder of skills under the home.
const SkillsDirName = "skills"

// CommandsDirName is the folder of the user's slash commands.
const CommandsDirName = "commands"

// projectSkillDirs are a trusted workspace's skill folders, mx-claw's
// first, then Claude Code's, then the Agent Skills format's.
var projectSkillDirs = []string{".mx-claw/skills", ".claude/skills", ".agents/skills"}

// projectCommandDirs are a trusted workspace's command folders.
var projectCommandDirs = []string{".mx-claw/commands", ".claude/commands"}

// SkillStore returns the home's skill folders (active and proposed).
func (a *App) SkillStore() skills.Store {
	return skills.Store{Dir: filepath.Join(a.Home, SkillsDirName)}
}

// MemoryCandidates returns the home's memory candidates.
func (a *App) MemoryCandidates() memory.Candidates { return memory.Candidates{Home: a.Home} }

// trusted reports whether the workspace is trusted; an error counts as
// not trusted (and is logged), since what follows only adds to a prompt.
func (a *App) trusted(ctx context.Context, workspace string) bool {
	ok, err := a.Trusted(ctx, workspace)
	if err != nil {
		a.log().Warn("workspace trust", "workspace", workspace, "err", err)
	}
	return ok && err == nil
}

// Skills finds the skills a new session in workspace may load: the
// user's, the trusted workspace's, the enabled plugins'.
func (a *App) Skills(ctx context.Context, workspace string) ([]skills.Skill, []string) {
	return a.skillsFor(workspace, a.trusted(ctx, workspace))
}

// skillsFor finds the skills of a workspace, trusted or not.
func (a *App) skillsFor(workspace string, trusted bool) ([]skills.Skill, []string) {
	roots := []skills.Root{{Dir: a.SkillStore().Active(), Source: "user"}}
	if trusted {
		for _, d := range projectSkillDirs {
			roots = append(roots, skills.Root{Dir: filepath.Join(workspace, filepath.FromSlash(d)), Source: "project", Base: workspace})
		}
	}
	enabled, warnings := plugins.Enabled(a.Home)
	for _, p := range enabled {
		for _, d := range p.SkillDirs {
			roots = append(roots, skills.Root{Dir: d, Source: "plugin:" + p.Name, Prefix: p.Name + ":", Base: p.Dir})
		}
	}
	found, warns := skills.Discover(roots, &a.skillCache)
	return found, append(warnings, warns...)
}

// Commands finds the custom slash commands of a workspace: the user's,
// the trusted workspace's, the enabled plugins'.
func (a *App) Commands(ctx context.Context, workspace string) ([]slashcmd.Command, []string) {
	roots := []slashcmd.Root{{Dir: filepath.Join(a.Home, CommandsDirName), Source: "user"}}
	if a.trusted(ctx, workspace) {
		for _, d := range projectCommandDirs {
			roots = append(roots, slashcmd.Root{Dir: filepath.Join(workspace, filepath.FromSlash(d)), Source: "project", Base: workspace})
		}
	}
	enabled, warnings := plugins.Enabled(a.Home)
	for _, p := range enabled {
		for _, d := range p.CommandDirs {
			roots = append(roots, slashcmd.Root{Dir: d, Source: "plugin:" + p.Name, Base: p.Dir, PluginRoot: p.Dir, Namespace: p.Name})
		}
		for _, f := range p.CommandFiles {
			// A single file is a folder of one: its own folder, with
			// only that file looked at.
			roots = append(roots, slashcmd.Root{Dir: f, Source: "plugin:" + p.Name, Base: p.Dir, PluginRoot: p.Dir, Namespace: p.Name})
		}
	}
	found, warns := slashcmd.Discover(roots)
	return found, append(warnings, warns...)
}

// sessionContext is agent.Options.SessionContext: the memory files and
// the skills frozen into a new session, the index ranked against its
// first message.
func (a *App) sessionContext(ctx context.Context, sess *protocol.Session, first string) agent.SessionContext {
	return a.contextFor(sess.Workspace, a.trusted(ctx, sess.Workspace), first)
}

// contextFor is sessionContext for a workspace trusted or not.
func (a *App) contextFor(workspace string, trusted bool, first string) agent.SessionContext {
	var sc agent.SessionContext
	notes, warnings := memory.LoadNotes(memory.NoteOptions{Home: a.Home, Workspace: workspace, Trusted: trusted})
	sc.Warnings = warnings
	for _, n := range notes {
		sc.Memory = append(sc.Memory, agent.MemoryNote{Label: n.Label, Text: n.Text})
		sc.Frozen.Memory = append(sc.Frozen.Memory, protocol.FrozenMemory{Label: n.Label, Path: n.Path, Bytes: n.Size, Cut: n.Cut, SHA256: n.SHA256})
	}
	found, warns := a.skillsFor(workspace, trusted)
	sc.Warnings = append(sc.Warnings, warns...)
	cat := skills.NewCatalog(found)
	listed := make(map[string]bool)
	for _, s := range cat.Select(first, a.Config.Skills.IndexSize) {
		listed[s.Name] = true
		sc.Skills = append(sc.Skills, agent.SkillEntry{Name: s.Name, Description: s.Description})
	}
	sc.MoreSkills = cat.Len() - len(sc.Skills)
	for _, s := range found {
		sc.Frozen.Skills = append(sc.Frozen.Skills, protocol.FrozenSkill{Name: s.Name, Description: s.Description,
			AllowedTools: s.AllowedTools, Dir: s.Dir, Base: s.Base, Source: s.Source, Listed: listed[s.Name]})
	}
	return sc
}

// frozenScan bounds how many of a session's first events are searched
// for its context.frozen: it is stored with the first message, among the
// first few.
const frozenScan = 32

// FrozenContext returns what a session's prompt was frozen with, or nil
// for a session that started before mx-claw recorded it.
func (a *App) FrozenContext(ctx context.Context, sessionID string) (*protocol.FrozenContext, error) {
	evs, err := a.Store.Events(ctx, sessionID, 0, frozenScan)
	if err != nil {
		return nil, err
	}
	for _, e := range evs {
		if e.Type == protocol.EventContextFrozen && e.Context != nil {
			return e.Context, nil
		}
	}
	return nil, nil
}

// skillCatalogs caches each session's frozen skills for the skill tool.
type skillCatalogs struct {
	mu   sync.Mutex
	byID map[string]*skills.Catalog
}

// sessionSkills is the skill tool's lookup: the skills frozen with the
// session at its first turn.
func (a *App) sessionSkills(ctx context.Context, sessionID string) (*skills.Catalog, error) {
	a.skillCats.mu.Lock()
	cat, ok := a.skillCats.byID[sessionID]
	a.skillCats.mu.Unlock()
	if ok {
		return cat, nil
	}
	fc, err := a.FrozenContext(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if fc == nil {
		// Not frozen yet, or a session from before skills: not cached.
		return skills.NewCatalog(nil), nil
	}
	var list []skills.Skill
	for _, s := range fc.Skills {
		list = append(list, skills.Skill{Name: s.Name, Description: s.Description, AllowedTools: s.AllowedTools,
			Dir: s.Dir, Base: s.Base, Source: s.Source})
	}
	cat = skills.NewCatalog(list)
	a.skillCats.mu.Lock()
	if a.skillCats.byID == nil {
		a.skillCats.byID = make(map[string]*skills.Catalog)
	}
	a.skillCats.byID[sessionID] = cat
	a.skillCats.mu.Unlock()
	return cat, nil
}

// remember is agent.Options.Remember: the requests to remember in the
// user's message become candidates, with where they came from.
func (a *App) remember(ctx context.Context, sess *protocol.Session, msg *protocol.Message, typed string) ([]protocol.MemoryCandidate, error) {
	reqs := memory.Detect(typed)
	if len(reqs) == 0 {
		return nil, nil
	}
	cands := make([]memory.Candidate, len(reqs))
	for i, r := range reqs {
		cands[i] = memory.Candidate{File: r.File, Text: r.Text, Quote: r.Quote, SessionID: sess.ID,
			MessageSeq: msg.Seq, Workspace: sess.Workspace}
	}
	added, err := a.MemoryCandidates().Add(cands...)
	out := make([]protocol.MemoryCandidate, len(added))
	for i, c := range added {
		out[i] = protocol.MemoryCandidate{ID: c.ID, File: c.File, Text: c.Text, Quote: c.Quote, MessageSeq: c.MessageSeq, CreatedAt: c.CreatedAt}
	}
	return out, err
}

// proposeSkill is agent.Options.ProposeSkill: the model's SKILL.md for a
// trajectory is kept under skills/proposed/, never loaded.
func (a *App) proposeSkill(ctx context.Context, tr skills.Trajectory, answer string) (*protocol.SkillProposal, error) {
	name, md, err := skills.ParseProposal(answer)
	if err != nil {
		return nil, err
	}
	p, err := a.SkillStore().Propose(tr, name, md)
	if err != nil {
		return nil, err
	}
	return &protocol.SkillProposal{Name: p.Name, Description: p.Description, Dir: p.Dir}, nil
}

// pluginHooks returns the hooks of the enabled plugins.
func (a *App) pluginHooks() ([]*hooks.Config, error) {
	enabled, warnings := plugins.Enabled(a.Home)
	for _, w := range warnings {
		a.log().Warn("plugins", "warning", w)
	}
	var out []*hooks.Config
	for _, p := range enabled {
		if len(p.Hooks) == 0 {
			continue
		}
		c, err := hooks.ParseConfig(json.RawMessage(p.Hooks), p.HooksSource)
		if err != nil {
			return nil, fmt.Errorf("plugin %s: %w", p.Name, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// proposeSkillFunc returns proposeSkill, or nil when the config turns
// skill proposals off, or leaves them to the default in a headless run.
func (a *App) proposeSkillFunc() func(context.Context, skills.Trajectory, string) (*protocol.SkillProposal, error) {
	if !a.Config.Skills.ProposalsOn() || a.opts.Headless && a.Config.Skills.Proposals == nil {
		return nil
	}
	return a.proposeSkill
}

// addPluginServers adds the MCP servers of the enabled plugins to cfg as
// the user's own (the user enabled the plugin). A name already taken, by
// the user's settings, the project or an earlier plugin, is held with the
// reason.
func (a *App) addPluginServers(cfg *mcp.Config) {
	enabled, _ := plugins.Enabled(a.Home)
	names := make(map[string]bool)
	for _, s := range cfg.Servers {
		names[s.Name] = true
	}
	for _, p := range enabled {
		if len(p.MCPServers) == 0 {
			continue
		}
		raw, err := json.Marshal(p.MCPServers)
		if err != nil {
			continue
		}
		servers, problems := mcp.ParseServers(raw, mcp.SourceUser, p.Manifest)
		cfg.Problems = append(cfg.Problems, problems...)
		for _, s := range servers {
			if names[s.Name] {
				cfg.Held = append(cfg.Held, mcp.Held{Server: s, Shadowed: true,
					Reason: fmt.Sprintf("plugin %s's server %q is not started: another server has that name", p.Name, s.Name)})
				continue
			}
			names[s.Name] = true
			cfg.Servers = append(cfg.Servers, s)
		}
	}
}
