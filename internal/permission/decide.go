package permission

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
)

// Request is one tool call to decide, as plain values.
type Request struct {
	// Tool is the tool name, e.g. "run_command" or "edit_file".
	Tool string
	// Risk is the tool's risk: "read", "write" or "execute". Anything else
	// counts as "execute".
	Risk string
	// Args are the call's arguments (already schema-validated). They fill
	// Command, Workdir and Paths when those are empty.
	Args json.RawMessage
	// Paths are the canonical absolute paths the call touches (see
	// ArgPaths). When empty they are derived from Args lexically.
	Paths []string
	// Command is run_command's command line.
	Command string
	// Workdir is run_command's working directory (absolute, or relative to
	// Workspace; empty for the workspace root).
	Workdir string
	// Workspace is the canonical workspace root.
	Workspace string
	// Roots are the session's additional directories (--add-dir,
	// permissions.additionalDirectories), canonical. They count as the
	// workspace does for the mode's write allowance, for reads outside
	// the workspace and for protected paths (judged from the root that
	// holds a path); path rules stay relative to Workspace.
	Roots []string
	// Home is the user's canonical home directory (for ~ in rules and
	// commands).
	Home string
}

// SourceKind says what kind of thing made a decision.
type SourceKind string

// The kinds of decision source.
const (
	// SourceRule is an allow, ask or deny rule from settings or a grant.
	SourceRule SourceKind = "rule"
	// SourceMode is the permission mode.
	SourceMode SourceKind = "mode"
	// SourceHardCheck is a check no mode or rule overrides: a
	// catastrophic command (deny), a command that cannot be judged before
	// running or a protected path (ask).
	SourceHardCheck SourceKind = "hard-check"
	// SourceReadOnly is the read-only command classification.
	SourceReadOnly SourceKind = "read-only"
	// SourceParseFailure is a command line that could not be parsed.
	SourceParseFailure SourceKind = "parse-failure"
	// SourceUser is a person's answer to an ask; Decide never returns it,
	// the approval flow records it.
	SourceUser SourceKind = "user"
	// SourceHook is a hook's decision; Decide never returns it, the hook
	// runner records it.
	SourceHook SourceKind = "hook"
)

// Source is what made a decision; it is recorded in the audit log and
// shown by `mx-claw permissions test`.
type Source struct {
	// Kind is the kind of source.
	Kind SourceKind `json:"kind"`
	// List is the rule's list (allow, ask, deny) for SourceRule.
	List Action `json:"list,omitempty"`
	// Rule is the rule text for SourceRule.
	Rule string `json:"rule,omitempty"`
	// Origin is the settings file or grant origin for SourceRule.
	Origin string `json:"origin,omitempty"`
	// Mode is the mode for SourceMode.
	Mode Mode `json:"mode,omitempty"`
	// Check names the hard check for SourceHardCheck.
	Check string `json:"check,omitempty"`
}

// The hard checks named in Source.Check.
const (
	// CheckCatastrophic denies a command on the catastrophic list.
	CheckCatastrophic = "catastrophic command"
	// CheckUnresolved asks for a command that cannot be judged before
	// running (see CommandPart.Unresolved).
	CheckUnresolved = "command cannot be judged before running"
	// CheckProtected asks before a write that acceptEdits would otherwise
	// allow to a protected path: .git, .mx-claw, .claude, or a file that
	// makes other programs run code (see the package doc).
	CheckProtected = "protected path"
	// CheckLooksCatastrophic asks for a command that parses as harmless
	// but whose text, read naively, contains a catastrophic command (a
	// here-document delimiter, a quoted string).
	CheckLooksCatastrophic = "text looks catastrophic"
)

// String describes the source in a few words, e.g. `deny rule
// run_command(curl:*) from /home/u/.mx-claw/settings.json`, `mode
// default`, `hard check: catastrophic command`, `read-only command`,
// `parse failure`.
func (s Source) String() string {
	switch s.Kind {
	case SourceRule:
		out := string(s.List) + " rule " + s.Rule
		if s.Origin != "" {
			out += " from " + s.Origin
		}
		return out
	case SourceMode:
		return "mode " + string(s.Mode)
	case SourceHardCheck:
		return "hard check: " + s.Check
	case SourceReadOnly:
		return "read-only command"
	case SourceParseFailure:
		return "parse failure"
	case SourceUser:
		return "user"
	case SourceHook:
		return "hook"
	}
	return string(s.Kind)
}

// Decision is the answer for one call.
type Decision struct {
	// Tool is the tool decided on.
	Tool string `json:"tool"`
	// Action is allow, ask or deny: the strictest of Parts.
	Action Action `json:"action"`
	// Source is what made the deciding part's decision.
	Source Source `json:"source"`
	// Reason explains the decision to the model and the user.
	Reason string `json:"reason"`
	// Suggest is, for Ask, the narrowest allow rule that would cover this
	// call (`run_command(go test:*)`, `edit_file(src/main.go)`), for the
	// approval prompt to offer; empty when no rule would (an ask rule or a
	// hard check asked).
	Suggest string `json:"suggest,omitempty"`
	// Parts are the decisions for each subject: each simple command and
	// redirection of a command line, or each path of a file tool.
	Parts []PartDecision `json:"parts,omitempty"`
}

// PartDecision is the decision for one subject of a call.
type PartDecision struct {
	// Subject is the command text or the path.
	Subject string `json:"subject"`
	// Part is the classified command part (zero for a path).
	Part CommandPart `json:"part"`
	// Path is the path (empty for a command part).
	Path string `json:"path,omitempty"`
	// Action, Source and Reason are as in Decision.
	Action Action `json:"action"`
	Source Source `json:"source"`
	Reason string `json:"reason"`
}

// ReadOnly reports whether d allows a command the classifier judged
// read-only in every part: no rule, mode, hook or grant was needed. Such a
// call changes nothing, so it may run beside other reads (the agent runs
// it in a parallel batch); deciding this per call, not per tool, lets
// `grep -rn x .` run with read_file while `go test` waits its turn.
func (d *Decision) ReadOnly() bool {
	if d.Action != Allow || d.Tool != CommandTool || len(d.Parts) == 0 {
		return false
	}
	for i := range d.Parts {
		if p := &d.Parts[i]; p.Action != Allow || p.Source.Kind != SourceReadOnly || !p.Part.ReadOnly {
			return false
		}
	}
	return true
}

// Decide decides a call. It never fails: anything it cannot judge asks
// (or, in plan mode, is denied).
func (p *Policy) Decide(req Request) Decision {
	req = fillRequest(req)
	var d Decision
	switch {
	case req.Tool == CommandTool:
		d = p.decideCommand(req)
	case req.Tool == WebFetchTool || req.Tool == WebSearchTool:
		d = p.decideWeb(req)
	default:
		d = p.decidePaths(req)
	}
	d.Tool = req.Tool
	return d
}

// fillRequest derives Command, Workdir and Paths from Args when missing.
func fillRequest(req Request) Request {
	if req.Tool == CommandTool && req.Command == "" && len(req.Args) > 0 {
		var a struct {
			Command string `json:"command"`
			Workdir string `json:"workdir"`
		}
		if json.Unmarshal(req.Args, &a) == nil {
			req.Command = a.Command
			if req.Workdir == "" {
				req.Workdir = a.Workdir
			}
		}
	}
	if req.Tool != CommandTool && len(req.Paths) == 0 && len(req.Args) > 0 {
		raw, _ := ArgPaths(req.Tool, req.Args)
		for _, r := range raw {
			req.Paths = append(req.Paths, lexicalPath(r, req.Workspace, req.Home))
		}
	}
	if req.Workdir != "" && !filepath.IsAbs(req.Workdir) && req.Workspace != "" {
		req.Workdir = filepath.Join(req.Workspace, req.Workdir)
	}
	return req
}

// match returns the first rule of list that applies.
func (p *Policy) match(list Action, ok func(Rule) bool) *EffectiveRule {
	if p == nil {
		return nil
	}
	for i := range p.rules {
		if r := &p.rules[i]; r.List == list && ok(r.Rule) {
			return r
		}
	}
	return nil
}

func ruleSource(r *EffectiveRule) Source {
	return Source{Kind: SourceRule, List: r.List, Rule: r.Rule.Text, Origin: r.Origin}
}

// ruleReason explains a rule decision.
func ruleReason(r *EffectiveRule, subject string) string {
	from := ""
	if r.Origin != "" {
		from = " (" + r.Origin + ")"
	}
	switch r.List {
	case Deny:
		return fmt.Sprintf("%s is denied by the rule %s%s", subject, r.Rule.Text, from)
	case Ask:
		return fmt.Sprintf("%s needs approval: the rule %s%s asks for it", subject, r.Rule.Text, from)
	}
	return fmt.Sprintf("%s is allowed by the rule %s%s", subject, r.Rule.Text, from)
}

// decideCommand decides a run_command call, part by part.
func (p *Policy) decideCommand(req Request) Decision {
	parts := ClassifyCommand(req.Command, Env{Workspace: req.Workspace, Workdir: req.Workdir, Home: req.Home})
	whole, _ := canonicalLine(req.Command)
	mode := p.Mode()
	var pds []PartDecision
	for i := range parts {
		pds = append(pds, p.judgePart(&parts[i], req, whole, mode))
	}
	var d Decision
	if len(pds) == 0 {
		d = Decision{Action: Allow, Source: Source{Kind: SourceReadOnly}, Reason: "the command is empty and runs nothing"}
	} else {
		d = combine(pds)
	}
	if d.Action == Allow {
		// Defence in depth: text that reads like a catastrophic command
		// once quotes are dropped (a heredoc delimiter, a quoted string)
		// is never allowed silently.
		env := Env{Workspace: req.Workspace, Workdir: req.Workdir, Home: req.Home}
		if why := newClassifier(env).roughScan(req.Command); why != "" {
			d.Action, d.Source = Ask, Source{Kind: SourceHardCheck, Check: CheckLooksCatastrophic}
			d.Reason = "the command text contains what looks like a catastrophic command (" + why + "); it needs approval"
		}
	}
	if d.Action == Ask {
		d.Suggest = suggestCommand(req, pds)
	}
	return d
}

// judgePart decides one command part (see the package doc for the order).
func (p *Policy) judgePart(part *CommandPart, req Request, whole string, mode Mode) PartDecision {
	subject := part.Text
	pd := PartDecision{Subject: subject, Part: *part}
	set := func(a Action, s Source, reason string) PartDecision {
		pd.Action, pd.Source, pd.Reason = a, s, reason
		return pd
	}
	tool := func(match func(Rule) bool) func(Rule) bool {
		return func(r Rule) bool { return r.matchTool(CommandTool) && match(r) }
	}
	loose := tool(func(r Rule) bool { return r.matchPart(part, whole, req.Home, true) })
	strictMatch := tool(func(r Rule) bool { return r.matchPart(part, whole, req.Home, false) })
	quoted := fmt.Sprintf("%q", subject)

	if part.Catastrophic {
		return set(Deny, Source{Kind: SourceHardCheck, Check: CheckCatastrophic},
			fmt.Sprintf("%s is refused: %s. It is on the catastrophic list, which no mode or rule allows", quoted, part.Reason))
	}
	if r := p.match(Deny, loose); r != nil {
		return set(Deny, ruleSource(r), ruleReason(r, quoted))
	}
	paths, unknown := part.namedPaths(req.Home)
	if d := p.judgeNamedPaths(part, paths, req, quoted); d != nil {
		return set(d.Action, d.Source, d.Reason)
	}
	if d := p.judgeWrittenPaths(part, req, quoted); d != nil {
		return set(d.Action, d.Source, d.Reason)
	}
	if part.Kind == PartRedirect && part.Path != "" {
		if store := p.secretStore(part.Path, req.Home); store != "" && !p.namesStore("edit_file", part.Path, store, req.Workspace, req.Home) {
			return set(Deny, Source{Kind: SourceHardCheck, Check: CheckSecretStore},
				fmt.Sprintf("%s writes into the secret store %s, which no tool may use unless an allow rule names it",
					quoted, displayPath(store, req.Workspace, req.Home)))
		}
	}
	if part.Unresolved {
		if mode == ModePlan {
			return set(Deny, Source{Kind: SourceMode, Mode: ModePlan},
				fmt.Sprintf("plan mode: running %s is not allowed (%s); describe the change instead", quoted, part.Reason))
		}
		src := Source{Kind: SourceHardCheck, Check: CheckUnresolved}
		if part.Kind == PartUnparsed {
			src = Source{Kind: SourceParseFailure}
		}
		return set(Ask, src, fmt.Sprintf("%s needs approval: %s", quoted, part.Reason))
	}
	if mode == ModePlan && !part.ReadOnly {
		what := "running " + quoted
		if part.Kind == PartRedirect {
			what = "writing " + part.Words[len(part.Words)-1]
		}
		return set(Deny, Source{Kind: SourceMode, Mode: ModePlan},
			fmt.Sprintf("plan mode: %s is not allowed (%s); describe the change instead", what, part.Reason))
	}
	if r := p.match(Ask, loose); r != nil {
		return set(Ask, ruleSource(r), ruleReason(r, quoted))
	}
	if why := p.unknownWrite(part, req, quoted); why != "" {
		return set(Ask, Source{Kind: SourceHardCheck, Check: CheckUnknownWrite}, why)
	}
	beyond := ""
	if part.ReadOnly {
		if beyond = p.readsBeyond(part, paths, unknown, req); beyond == "" {
			return set(Allow, Source{Kind: SourceReadOnly}, part.Reason)
		}
	}
	if r := p.match(Allow, strictMatch); r != nil {
		return set(Allow, ruleSource(r), ruleReason(r, quoted))
	}
	switch mode {
	case ModeBypass:
		return set(Allow, Source{Kind: SourceMode, Mode: mode}, "bypass mode allows "+quoted)
	case ModeAcceptEdits:
		if root := req.rootOf(part.Path); part.Kind == PartRedirect && part.Path != "" && root != "" &&
			req.rootOf(resolvePath(part.Path)) == root {
			if why := protectedWrite(part.Path, root); why != "" {
				return set(Ask, Source{Kind: SourceHardCheck, Check: CheckProtected},
					fmt.Sprintf("%s needs approval: %s is protected: %s", quoted,
						displayPath(part.Path, req.Workspace, req.Home), why))
			}
			return set(Allow, Source{Kind: SourceMode, Mode: mode}, "acceptEdits mode allows writing "+part.Path)
		}
	}
	if beyond != "" {
		return set(Ask, Source{Kind: SourceHardCheck, Check: CheckReadsBeyond},
			fmt.Sprintf("%s needs approval: %s", quoted, beyond))
	}
	reason := fmt.Sprintf("%s needs approval: %s", quoted, part.Reason)
	if knownWriters[part.Name] {
		for _, np := range paths {
			if why := protectedWrite(np, req.Workspace); why != "" {
				reason += fmt.Sprintf("; it may write %s, which is protected: %s", displayPath(np, req.Workspace, req.Home), why)
				break
			}
		}
	}
	return set(Ask, Source{Kind: SourceMode, Mode: mode}, reason)
}

// knownWriters are programs that write the files their arguments name;
// the reason an ask gives for them says when one of those is protected.
var knownWriters = map[string]bool{
	"cp": true, "mv": true, "tee": true, "install": true, "ln": true, "touch": true,
	"truncate": true, "sed": true, "perl": true, "dd": true, "rsync": true, "patch": true,
	"chmod": true, "rm": true, "unlink": true,
}

// combine returns the decision of the strictest part.
func combine(pds []PartDecision) Decision {
	best := 0
	for i, pd := range pds {
		if pd.Action.severity() > pds[best].Action.severity() {
			best = i
		}
	}
	b := pds[best]
	return Decision{Action: b.Action, Source: b.Source, Reason: b.Reason, Parts: pds}
}

// rootOf returns the workspace or the additional root that holds the
// canonical path p, or "" if none does.
func (req Request) rootOf(p string) string {
	if req.Workspace != "" && within(req.Workspace, p) {
		return req.Workspace
	}
	for _, r := range req.Roots {
		if within(r, p) {
			return r
		}
	}
	return ""
}

// risk normalises a request's risk.
func risk(r string) string {
	switch r {
	case "read", "write":
		return r
	}
	return "execute"
}

// decidePaths decides a call of a tool other than run_command, path by
// path (a call without paths is one subject that only whole-tool rules
// match).
func (p *Policy) decidePaths(req Request) Decision {
	paths := pathSubjects(req)
	if len(paths) == 0 {
		paths = []string{""}
	}
	var pds []PartDecision
	for _, path := range paths {
		pds = append(pds, p.judgePath(req, path))
	}
	d := combine(pds)
	if d.Action == Ask {
		d.Suggest = suggestPaths(req, pds)
	}
	return d
}

func (p *Policy) judgePath(req Request, path string) PartDecision {
	mode, rk := p.Mode(), risk(req.Risk)
	subject := path
	if subject == "" {
		subject = req.Tool
	}
	pd := PartDecision{Subject: subject, Path: path}
	set := func(a Action, s Source, reason string) PartDecision {
		pd.Action, pd.Source, pd.Reason = a, s, reason
		return pd
	}
	match := func(r Rule) bool {
		return r.matchTool(req.Tool) && r.matchPath(path, req.Workspace, req.Home)
	}
	what := req.Tool + " on " + displayPath(path, req.Workspace, req.Home)
	if path == "" {
		what = req.Tool
	}
	if r := p.match(Deny, match); r != nil {
		return set(Deny, ruleSource(r), ruleReason(r, what))
	}
	if store := p.secretStore(path, req.Home); store != "" && !p.namesStore(req.Tool, path, store, req.Workspace, req.Home) {
		return set(Deny, Source{Kind: SourceHardCheck, Check: CheckSecretStore},
			fmt.Sprintf("%s is denied: %s is a secret store, which no tool may use unless an allow rule names it (e.g. %s(%s))",
				what, displayPath(store, req.Workspace, req.Home), req.Tool, displayPath(path, req.Workspace, req.Home)))
	}
	if mode == ModePlan && rk != "read" {
		verb := "writing " + displayPath(path, req.Workspace, req.Home)
		if path == "" || rk == "execute" {
			verb = "running " + what
		}
		return set(Deny, Source{Kind: SourceMode, Mode: ModePlan},
			fmt.Sprintf("plan mode: %s is not allowed; describe the change instead", verb))
	}
	if r := p.match(Ask, match); r != nil {
		return set(Ask, ruleSource(r), ruleReason(r, what))
	}
	if r := p.match(Allow, match); r != nil {
		return set(Allow, ruleSource(r), ruleReason(r, what))
	}
	modeSrc := Source{Kind: SourceMode, Mode: mode}
	switch {
	case rk == "read":
		return set(Allow, modeSrc, mode.String()+" mode allows reading")
	case mode == ModeBypass:
		return set(Allow, modeSrc, "bypass mode allows "+what)
	case mode == ModeAcceptEdits && rk == "write" && path != "" && req.rootOf(path) != "":
		if why := protectedWrite(path, req.rootOf(path)); why != "" {
			return set(Ask, Source{Kind: SourceHardCheck, Check: CheckProtected},
				what+" needs approval: "+displayPath(path, req.Workspace, req.Home)+" is protected: "+why)
		}
		return set(Allow, modeSrc, "acceptEdits mode allows edits inside the workspace")
	}
	return set(Ask, modeSrc, what+" needs approval")
}

// pathSubjects returns the paths a file tool call is judged on: the
// canonical paths the caller gave, and the paths its arguments name as
// written and as their links resolve, each once. A rule or check must hold
// for every form, so a link cannot make a protected or denied path look
// like another.
func pathSubjects(req Request) []string {
	var out []string
	add := func(p string) {
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, p := range req.Paths {
		add(p)
	}
	if len(req.Args) > 0 {
		raw, _ := ArgPaths(req.Tool, req.Args)
		for _, r := range raw {
			lex := lexicalPath(r, req.Workspace, req.Home)
			add(lex)
			add(resolvePath(lex))
		}
	}
	return out
}

// displayPath shows p relative to the workspace, or with ~ for the home
// directory, or absolute.
func displayPath(p, workspace, home string) string {
	if p == "" {
		return ""
	}
	if within(workspace, p) {
		rel, _ := filepath.Rel(workspace, p)
		return filepath.ToSlash(rel)
	}
	if within(home, p) {
		rel, _ := filepath.Rel(home, p)
		if rel == "." {
			return "~"
		}
		return "~/" + filepath.ToSlash(rel)
	}
	return p
}
