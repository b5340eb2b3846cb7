package worktree

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mx-claw/mx-claw/internal/tools"
)

// MergeToolName is the name of the tool that merges a subagent's branch.
const MergeToolName = "merge_worktree"

//go:embed merge_worktree.md
var mergeDescription string

const mergeSchema = `{
  "type": "object",
  "properties": {
    "branch": {"type": "string"}
  },
  "required": ["branch"],
  "additionalProperties": false
}`

// MergeTool is the merge_worktree tool: Merge as a tool call, so it goes
// through the permission check (it writes: every mode but bypass asks),
// hooks and the audit like any other.
type MergeTool struct{}

type mergeArgs struct {
	Branch string `json:"branch"`
}

// mergeInfo is what the merge tool is to the agent; Info returns it, shared.
var mergeInfo = tools.Info{Name: MergeToolName, Description: mergeDescription, Schema: json.RawMessage(mergeSchema),
	Risk: tools.RiskWrite}

func (MergeTool) Info() tools.Info { return mergeInfo }

func (MergeTool) Summary(args json.RawMessage) string {
	var a mergeArgs
	if json.Unmarshal(args, &a) != nil || a.Branch == "" {
		return "Merge a subagent's branch"
	}
	return "Merge " + a.Branch + " into the working tree"
}

// Run merges the branch into the repository holding the workspace.
func (MergeTool) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	var a mergeArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return tools.Result{}, err
	}
	repo, err := RepoRoot(ctx, env.Workspace.Root())
	if err != nil {
		return tools.Result{}, err
	}
	res, err := Merge(ctx, repo, strings.TrimSpace(a.Branch))
	var conflict *ConflictError
	var refused *RefusedError
	switch {
	case errors.As(err, &conflict), errors.As(err, &refused):
		return tools.Result{Content: "Not merged: " + err.Error(), IsError: true}, nil
	case err != nil:
		return tools.Result{}, err
	case len(res.Files) == 0:
		return tools.Result{Content: fmt.Sprintf("%s has no changes to merge.", res.Branch)}, nil
	}
	return tools.Result{Content: fmt.Sprintf("Merged the changes of %s into the working tree (uncommitted, for the user to review):\n%s\nThe branch is kept; the user may delete it with `git branch -D %s`.",
		res.Branch, strings.TrimRight(res.Stat, "\n"), res.Branch)}, nil
}
