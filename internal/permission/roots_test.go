package permission

import (
	"encoding/json"
	"testing"
)

// TestAdditionalRoots: an added directory is judged as the workspace is,
// protected paths included; a directory beside it is not.
func TestAdditionalRoots(t *testing.T) {
	t.Parallel()
	const ws, extra = "/work/app", "/work/lib"
	edit := func(path string) Request {
		args, _ := json.Marshal(map[string]string{"path": path, "old_string": "a", "new_string": "b"})
		return Request{Tool: "edit_file", Risk: "write", Args: args, Paths: []string{path}, Workspace: ws, Roots: []string{extra}}
	}
	cmd := func(line string) Request {
		return Request{Tool: CommandTool, Risk: "execute", Command: line, Workspace: ws, Roots: []string{extra}}
	}
	p := policy(t, ModeAcceptEdits, nil, nil, nil)
	tests := []struct {
		name string
		req  Request
		want Action
	}{
		{"edit in the workspace", edit(ws + "/main.go"), Allow},
		{"edit in the added directory", edit(extra + "/util.go"), Allow},
		{"protected in the added directory", edit(extra + "/.git/config"), Ask},
		{"AGENTS.md in the added directory", edit(extra + "/AGENTS.md"), Ask},
		{"edit beside both", edit("/work/other/x.go"), Ask},
		{"read-only command in the added directory", cmd("cat " + extra + "/README.md"), Allow},
		{"read-only command beside both", cmd("cat /work/other/README.md"), Ask},
		{"redirect into the added directory", cmd("echo hi > " + extra + "/out.txt"), Allow},
	}
	for _, tt := range tests {
		if d := p.Decide(tt.req); d.Action != tt.want {
			t.Errorf("%s: %s (%s), want %s", tt.name, d.Action, d.Reason, tt.want)
		}
	}
	// Without the root, the same edit asks.
	r := edit(extra + "/util.go")
	r.Roots = nil
	if d := p.Decide(r); d.Action != Ask {
		t.Errorf("without the root: %s", d.Action)
	}
}
