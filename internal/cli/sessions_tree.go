package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/termsafe"
)

// maxTreeDepth bounds how deep `sessions show` follows subagents.
const maxTreeDepth = 4

// sessionTree is a session's subagents, and theirs, for `sessions show`.
type sessionTree struct {
	Session  protocol.Session `json:"session"`
	Children []sessionTree    `json:"children,omitempty"`
}

// childrenOf returns the subagent sessions a session started, oldest
// first, with their own.
func childrenOf(ctx context.Context, st store.Store, id string, depth int) ([]sessionTree, error) {
	if depth >= maxTreeDepth {
		return nil, nil
	}
	kids, err := st.ListSessions(ctx, store.ListOptions{Parent: id})
	if err != nil {
		return nil, err
	}
	out := make([]sessionTree, 0, len(kids))
	for i := len(kids) - 1; i >= 0; i-- { // listed newest first
		grand, err := childrenOf(ctx, st, kids[i].ID, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, sessionTree{Session: kids[i], Children: grand})
	}
	return out, nil
}

// printTree writes a session's subagents as a tree.
func printTree(w io.Writer, tree []sessionTree, indent string) {
	for i, n := range tree {
		branch, next := "├─ ", "│  "
		if i == len(tree)-1 {
			branch, next = "└─ ", "   "
		}
		s := n.Session
		line := fmt.Sprintf("%s%s%s %s · %s · %d in, %d out", indent, branch, s.ID, s.Agent, s.Status,
			s.Usage.InputTokens, s.Usage.OutputTokens)
		if s.Title != "" {
			line += " · " + oneLine(s.Title, 60)
		}
		fmt.Fprintln(w, termsafe.Sanitize(line))
		if s.LastError != "" {
			fmt.Fprintln(w, termsafe.Sanitize(indent+next+"  error: "+oneLine(s.LastError, 100)))
		}
		printTree(w, n.Children, indent+next)
	}
}

// showTree prints the parent of a subagent's session and the subagents a
// session started.
func showTree(ctx context.Context, st store.Store, w io.Writer, s *protocol.Session) error {
	if s.ParentID != "" {
		fmt.Fprintf(w, "Parent    %s (this is a %s subagent's session)\n", s.ParentID, s.Agent)
	}
	tree, err := childrenOf(ctx, st, s.ID, 0)
	if err != nil || len(tree) == 0 {
		return err
	}
	fmt.Fprintln(w, "Subagents")
	printTree(w, tree, "  ")
	return nil
}
