package permission

import (
	"strings"
)

// SuggestRule returns the narrowest allow rule that would let req run
// without asking under default mode with no other rules: for a command,
// `run_command(go test:*)` when the second word is a subcommand of a
// known multi-command tool (go, git, npm, cargo, …), else the exact
// command; for a file tool, the exact path (relative to the workspace, or
// ~/…); never a whole built-in tool, but an MCP tool's name alone (its
// arguments have no paths, see [ArgPaths]). It is "" when the call needs no approval or no
// rule could allow it (a catastrophic or unresolvable command). Approving
// `touch a` gives `run_command(touch a)`, which does not allow `rm ~/a`.
func SuggestRule(req Request) string {
	return (&Policy{mode: ModeDefault}).Decide(req).Suggest
}

// suggestCommand proposes a rule covering every part of a command line
// that asks. It gives up ("") when a part asks for a reason no allow rule
// overrides.
func suggestCommand(req Request, pds []PartDecision) string {
	var asking []*PartDecision
	if len(pds) == 0 || combine(pds).Action == Allow {
		return "" // asked by the text check, which no rule overrides
	}
	for i := range pds {
		pd := &pds[i]
		if pd.Action != Ask {
			continue
		}
		if pd.Source.Kind == SourceHardCheck && pd.Source.Check == CheckReadsBeyond {
			// A read beyond the workspace: only this exact command line,
			// never a prefix that would cover other paths.
			return CommandTool + "(" + strings.TrimSpace(req.Command) + ")"
		}
		if pd.Source.Kind != SourceMode {
			return "" // an ask rule, a hard check or a parse failure
		}
		asking = append(asking, pd)
	}
	line := strings.TrimSpace(req.Command)
	if len(asking) != 1 || asking[0].Part.Kind != PartCommand {
		return CommandTool + "(" + line + ")"
	}
	part := asking[0].Part
	if part.nexact != len(part.Words) || !part.assignsExact || len(part.Words) == 0 {
		return CommandTool + "(" + line + ")"
	}
	var words []string
	if !part.envOK {
		words = append(words, part.Assigns...)
	}
	if len(part.Words) >= 2 && len(words) == 0 && subcommandTool(part.Name) && subcommandWord(part.Words[1]) {
		return CommandTool + "(" + joinWords(part.Words[:2]) + ":*)"
	}
	var b []string
	for _, a := range words {
		name, val, _ := strings.Cut(a, "=")
		b = append(b, name+"="+quoteWord(val))
	}
	b = append(b, joinWords(part.Words))
	return CommandTool + "(" + strings.Join(b, " ") + ")"
}

// subcommandTool reports programs whose second word is a subcommand.
func subcommandTool(name string) bool {
	switch name {
	case "go", "git", "npm", "pnpm", "yarn", "bun", "deno", "cargo", "rustup", "make",
		"docker", "podman", "kubectl", "helm", "terraform", "gh", "pip", "pip3", "uv",
		"poetry", "pipenv", "bundle", "rake", "mix", "dotnet", "gradle", "mvn", "just",
		"task", "brew", "swift", "flutter", "dart", "composer", "sbt", "zig", "mise",
		"turbo", "nx", "nix", "conda", "gcloud", "aws", "az":
		return true
	}
	return false
}

// subcommandWord reports words that look like a subcommand: lower-case
// letters, digits and - _ : . after a letter.
func subcommandWord(w string) bool {
	if w == "" || w[0] < 'a' || w[0] > 'z' {
		return false
	}
	for _, c := range w {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == ':' || c == '.') {
			return false
		}
	}
	return true
}

// suggestPaths proposes a rule covering the paths that ask.
func suggestPaths(req Request, pds []PartDecision) string {
	var pats []string
	for _, pd := range pds {
		if pd.Action != Ask {
			continue
		}
		if pd.Source.Kind == SourceMode && pd.Path == "" && IsMCPTool(req.Tool) {
			// An MCP tool is allowed as a whole: mcp__github__create_issue.
			return req.Tool
		}
		if pd.Source.Kind != SourceMode || pd.Path == "" {
			return ""
		}
		rp := ruleFilePath(pd.Path, req.Workspace, req.Home)
		if rp == "" {
			return ""
		}
		pats = append(pats, escapeGlob(rp))
	}
	switch len(pats) {
	case 0:
		return ""
	case 1:
		return req.Tool + "(" + pats[0] + ")"
	}
	for i, p := range pats {
		pats[i] = strings.ReplaceAll(p, ",", `\,`)
	}
	return req.Tool + "({" + strings.Join(pats, ",") + "})"
}

// ruleFilePath writes p the way a path rule does: relative to the
// workspace, ~/ for the home directory, else absolute; "" for the
// workspace root or home itself, which no exact rule should name.
func ruleFilePath(p, workspace, home string) string {
	d := displayPath(p, workspace, home)
	if d == "." || d == "~" {
		return ""
	}
	return d
}
