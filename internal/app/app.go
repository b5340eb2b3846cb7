// Package app is the single place where mx-claw is wired together: the
// config snapshot, the store, the tools, the model clients and the agent
// core. Front ends get a ready App from here and use its Core.
//
// Only cli, the front doors that serve other programs (server, and acp and
// appserver through Driver) and tests may import app; every other package
// is wired by it and never sees it.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/catalog"
	"github.com/mx-claw/mx-claw/internal/checkpoint"
	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/execx"
	"github.com/mx-claw/mx-claw/internal/llm"
	"github.com/mx-claw/mx-claw/internal/llm/openai"
	"github.com/mx-claw/mx-claw/internal/lsp"
	"github.com/mx-claw/mx-claw/internal/mcp"
	"github.com/mx-claw/mx-claw/internal/memory"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/sandbox"
	"github.com/mx-claw/mx-claw/internal/secret"
	"github.com/mx-claw/mx-claw/internal/skills"
	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/tools"
	"github.com/mx-claw/mx-claw/internal/tools/builtin"
	"github.com/mx-claw/mx-claw/internal/worktree"
)

// DBFileName is the database's file name inside the home directory.
const DBFileName = "mx-claw.db"

// OutputDirName is the directory inside the home where the whole output of
// commands whose result was cut is kept, one directory per session.
const OutputDirName = "outputs"

// App is a wired mx-claw: config, store and core.
type App struct {
	Home   string
	Config *config.Config
	Store  store.Store
	Core   *agent.Core
	// Secrets is the secret chain API keys are read from (and written to
	// by the model commands); built once per App.
	Secrets *secret.Chain
	// Jobs are the background processes of this process's sessions
	// (run_command with background: true); Close stops them.
	Jobs *execx.Jobs
	// Checkpoints keeps the workspaces' checkpoint stores (checkpoints.go).
	Checkpoints *checkpoint.Manager
	// Sandbox chooses and runs the command sandbox (see sandbox.go).
	Sandbox *sandbox.Manager
	groups  *execx.Groups // the process groups of running commands

	opts          Options
	temps         *tools.TempJournal
	started       RepairReport // what startup mended
	agentsCache   memory.Cache
	settingsCache map[string]cachedSettings // by path; guarded by mu
	skillCats     skillCatalogs             // sessions' frozen skills (extensions.go)
	skillCache    skills.Cache              // parsed SKILL.md files

	mu      sync.Mutex
	clients map[string]llm.Client // by clientKey
	addDirs []string              // --add-dir and /add-dir, canonical
	// sessionModes are permission modes chosen for single sessions in
	// this process (Driver.SetMode), by session id.
	sessionModes sync.Map
	// clientMCP are the MCP servers editors passed for single sessions
	// (Driver.UseMCPServers), by session id.
	clientMCP sync.Map

	tools   *tools.Registry // the built-in tools; sessions add their MCP tools
	mcpOnce sync.Once
	mcp     *mcp.Manager // see MCP
	extras  extras       // language servers, subagents' limits (subagents.go)

	// cfgMu guards Config against UpdateConfig; settingsWrite serialises
	// UpdateUserPermissions (usersettings.go).
	cfgMu         sync.RWMutex
	settingsWrite sync.Mutex
}

// Options adjust Open.
type Options struct {
	// MaxIterations overrides the config's iteration budget.
	MaxIterations int
	// Mode is the permission mode chosen for this process (flag); empty
	// leaves it to the settings' defaultMode, else default.
	Mode permission.Mode
	// Trust trusts the workspaces of this process's sessions (--trust),
	// and remembers that.
	Trust bool
	// AddDirs are directories beside the workspace the sessions of this
	// process may use (--add-dir); each must exist.
	AddDirs []string
	// SandboxMode is the sandbox mode chosen for this process (--sandbox);
	// empty leaves it to the settings.
	SandboxMode sandbox.Mode
	// Logger receives diagnostics; discarded if nil.
	Logger *slog.Logger
	// Version is mx-claw's version, told to MCP servers.
	Version string
	// Headless marks a process no one watches (mx-claw run): skill
	// proposals are off unless the config turns them on explicitly, since
	// a proposal is a model request the user did not see coming and the
	// process would wait for it before exiting.
	Headless bool
}

// LoadConfig loads the config of the home directory.
func LoadConfig(home string) (*config.Config, error) { return config.Load(home) }

// Open wires an App on an already loaded config: it opens the store in
// home and builds the core.
func Open(ctx context.Context, home string, cfg *config.Config, opts Options) (*App, error) {
	secrets, err := NewSecrets(home)
	if err != nil {
		return nil, &agent.ConfigError{Err: err}
	}
	// Opening the database and compiling the tools' schemas are the two
	// slow parts of start-up and need nothing from each other.
	type registryResult struct {
		reg *tools.Registry
		err error
	}
	a := &App{Home: home, Config: cfg, Secrets: secrets, opts: opts, clients: make(map[string]llm.Client),
		temps: tools.NewTempJournal(filepath.Join(home, TempJournalDirName))}
	regc := make(chan registryResult, 1)
	web, err := webTools(cfg, secrets)
	if err != nil {
		return nil, &agent.ConfigError{Err: err}
	}
	x := loadExtras(home, opts)
	go func() {
		all := append(builtin.All(), builtin.NewRunCommand(), builtin.NewReadToolOutput(), builtin.NewSearchHistory(),
			skills.NewTool(a.sessionSkills), builtin.NewProcessOutput(), builtin.NewProcessKill())
		all = append(append(all, web...), worktree.MergeTool{})
		if x.lsp != nil {
			all = append(all, lsp.NewTool(x.lsp))
		}
		reg, err := tools.NewRegistry(all...)
		regc <- registryResult{reg, err}
	}()
	st, err := OpenStore(ctx, home)
	rr := <-regc
	if err != nil {
		return nil, err
	}
	reg := rr.reg
	if rr.err != nil {
		st.Close()
		return nil, fmt.Errorf("tools: %w", rr.err)
	}
	a.Store, a.tools, a.extras = st, reg, x
	for _, d := range opts.AddDirs {
		if _, err := a.AddDir(d); err != nil {
			st.Close()
			return nil, &agent.ConfigError{Err: fmt.Errorf("--add-dir: %w", err)}
		}
	}
	a.Checkpoints = newCheckpoints(home, opts.Logger)
	a.openSandbox()
	a.Jobs = &execx.Jobs{Groups: a.groups}
	maxIter := opts.MaxIterations
	if maxIter <= 0 {
		maxIter = cfg.MaxIterations
	}
	a.Core, err = agent.New(agent.Options{
		Store:            grantStore{st},
		Models:           a.ResolveModel,
		Tools:            reg,
		MaxIterations:    maxIter,
		Permissions:      a.policy,
		Hooks:            a.hookRunner,
		Commands:         a.commands,
		SessionTools:     a.sessionTools,
		Context:          a.contextFiles,
		SessionContext:   a.sessionContext,
		Remember:         a.remember,
		ProposeSkill:     a.proposeSkillFunc(),
		MinProposalCalls: cfg.Skills.MinProposalCalls,
		Catalog:          a.model,
		CompactThreshold: cfg.CompactThreshold,
		Home:             UserHome(),
		OutputDir:        filepath.Join(home, OutputDirName),
		TempJournal:      a.temps,
		Jobs:             a.Jobs,
		Roots:            a.roots,
		Subagents:        a.subagents,
		SubagentLimits:   x.limits,
		Worktrees:        worktreesDir(home),
		Diagnose:         x.diagnose(),
		Logger:           opts.Logger,
		Checkpoints:      a.Checkpoints,
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	a.startup(ctx)
	return a, nil
}

// Close stops the background processes and the MCP servers, and closes
// the sandbox's proxies, the checkpoint stores (saving their caches), the
// store and the journal of temporary files.
func (a *App) Close() error {
	a.Jobs.Close()
	// After this no MCP manager is made, and one made before is seen.
	a.mcpOnce.Do(func() {})
	if a.mcp != nil {
		a.mcp.Close()
	}
	if a.extras.lsp != nil {
		a.extras.lsp.Close()
	}
	a.Sandbox.Close()
	return errors.Join(a.Checkpoints.Close(), a.temps.Close(), a.Store.Close())
}

// ResolveModel finds a ready model for an id ("provider/model", a model of
// the active provider, or "" for the default). The error names the missing
// step and the command that fixes it.
func (a *App) ResolveModel(id string) (agent.Model, error) {
	a.cfgMu.RLock()
	ref, err := a.Config.Resolve(id)
	a.cfgMu.RUnlock()
	if err != nil {
		return agent.Model{}, err
	}
	p := ref.Provider
	// The key comes from the secret chain: command, environment, OS
	// store, file. A damaged store is an error that says what to do.
	key, _, err := a.Secrets.GetKey(p.Name)
	if err != nil && !errors.Is(err, secret.ErrNotFound) {
		return agent.Model{}, err
	}
	if err := config.Ready(p, key); err != nil {
		return agent.Model{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	ck := clientKey(p, key)
	c, ok := a.clients[ck]
	if !ok {
		idle, _ := time.ParseDuration(a.Config.StreamIdleTimeout) // checked by config.Load
		c = hintingClient{provider: p.Name, baseURL: p.BaseURL,
			Client: redactingClient{Client: openai.New(openai.Config{BaseURL: p.BaseURL, APIKey: key, IdleTimeout: idle}), key: key}}
		a.clients[ck] = c
	}
	return agent.Model{ID: ref.String(), Name: ref.Model, Client: c}, nil
}

// contextFiles returns the AGENTS.md files that apply to a workspace (from
// the repository root down, and the home's), merged, for a new session.
func (a *App) contextFiles(workspace string) (string, []string) {
	c, err := memory.Load(workspace, a.Home, memory.Options{Cache: &a.agentsCache})
	if err != nil {
		return "", []string{"AGENTS.md: " + err.Error()}
	}
	return c.Text, c.Warnings
}

// model describes a model: the built-in catalog with the config's
// modelSettings over it.
func (a *App) model(id string) catalog.Model {
	var over map[string]catalog.Override
	if len(a.Config.ModelSettings) > 0 {
		over = make(map[string]catalog.Override, len(a.Config.ModelSettings))
		for k, m := range a.Config.ModelSettings {
			over[k] = catalog.Override{ContextWindow: m.ContextWindow, MaxOutput: m.MaxOutputTokens,
				InputPrice: m.InputPrice, CachedInputPrice: m.CachedInputPrice, OutputPrice: m.OutputPrice,
				Images: m.Images}
		}
	}
	return catalog.Lookup(id, over)
}

// Budget is the configured budget of a turn and of a session (config
// "budget"); front ends without their own flags use it as it is.
func (a *App) Budget() agent.Budget {
	c := a.Config.Budget
	b := agent.Budget{MaxTokens: c.MaxTokens, MaxCostUSD: c.MaxCostUSD,
		MaxSessionTokens: c.MaxSessionTokens, MaxSessionCostUSD: c.MaxSessionCostUSD}
	if d, err := time.ParseDuration(c.MaxTime); err == nil {
		b.MaxDuration = d
	}
	return b
}
