package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseConfigErrors(t *testing.T) {
	t.Parallel()
	const src = "/home/u/.mx-claw/settings.json"
	tests := []struct {
		name, raw, want string
	}{
		{"not an object", `[1]`, src + `: hooks: must be an object mapping event names to lists of matchers`},
		{"event not a list", `{"Stop": {}}`, src + `: hooks.Stop: must be a list`},
		{"claude-only event not a list", `{"Notebook": 3}`, src + `: hooks.Notebook: must be a list`},
		{"group not an object", `{"Stop": ["x"]}`, src + `: hooks.Stop[0]: must be an object`},
		{"missing hooks", `{"Stop": [{"matcher": "x"}]}`, src + `: hooks.Stop[0]: "hooks" is required`},
		{"hooks not a list", `{"Stop": [{"hooks": {}}]}`, src + `: hooks.Stop[0].hooks: must be a list of hook commands`},
		{"matcher not a string", `{"PreToolUse": [{"matcher": 3, "hooks": []}]}`, src + `: hooks.PreToolUse[0].matcher: must be a string`},
		{"invalid regexp", `{"PreToolUse": [{"matcher": "run_(", "hooks": []}]}`, src + `: hooks.PreToolUse[0].matcher: invalid regular expression "run_("`},
		{"escaping the anchors", `{"PreToolUse": [{"matcher": "a)|(b", "hooks": []}]}`, src + `: hooks.PreToolUse[0].matcher: invalid regular expression`},
		{"type missing", `{"PreToolUse": [{"hooks": [{"command": "x"}]}]}`, src + `: hooks.PreToolUse[0].hooks[0]: "type" must be a string`},
		{"entry not an object", `{"PreToolUse": [{"hooks": ["x"]}]}`, src + `: hooks.PreToolUse[0].hooks[0]: must be an object`},
		{"command missing", `{"PostToolUse": [{"hooks": [{"type": "command"}]}]}`, src + `: hooks.PostToolUse[0].hooks[0]: "command" must be a non-empty string`},
		{"command blank", `{"PostToolUse": [{"hooks": [{"type": "command", "command": "  "}]}]}`, src + `: hooks.PostToolUse[0].hooks[0]: "command" must be a non-empty string`},
		{"command not a string", `{"PostToolUse": [{"hooks": [{"type": "command", "command": ["ls"]}]}]}`, src + `: hooks.PostToolUse[0].hooks[0]: "command" must be a non-empty string`},
		{"misspelt command", `{"Stop": [{"hooks": [{"type": "command", "comand": "x"}]}]}`, src + `: hooks.Stop[0].hooks[0]: "command" must be a non-empty string`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := ParseConfig(json.RawMessage(tc.raw), src)
			if err == nil {
				t.Fatalf("ParseConfig(%s) = %v, want an error", tc.raw, c)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error\n got %s\nwant %s…", err, tc.want)
			}
			var ce *ConfigError
			if !errors.Is(err, ErrInvalidConfig) || !errors.As(err, &ce) || ce.Source != src {
				t.Errorf("error %v is not a *ConfigError for %s matching ErrInvalidConfig", err, src)
			}
		})
	}
}

func TestParseConfigEmpty(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"", "null", " {} ", `{"Stop": []}`, `{"Stop": [{"hooks": []}]}`} {
		c, err := ParseConfig(json.RawMessage(raw), "s.json")
		if err != nil || c.Len() != 0 {
			t.Errorf("ParseConfig(%q) = %d hooks, %v; want none, no error", raw, c.Len(), err)
		}
	}
}

func TestParseConfigClaudeCodeExample(t *testing.T) {
	t.Parallel()
	raw := `{
	  "PreToolUse": [
	    {"matcher": "Bash", "hooks": [{"type": "command", "command": "a", "timeout": 30}]},
	    {"matcher": "Edit|MultiEdit|Write", "hooks": [{"type": "command", "command": "b"}, {"type": "command", "command": "c", "timeout": 1.5}]}
	  ],
	  "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "d"}]}],
	  "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "e"}]}],
	  "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "f"}]}],
	  "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "g"}]}],
	  "PreCompact": [{"matcher": null, "hooks": [{"type": "command", "command": "h", "timeout": null}]}]
	}`
	c, err := ParseConfig(json.RawMessage(raw), "p.json")
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != 8 {
		t.Errorf("Len = %d, want 8", c.Len())
	}
	got := c.Matching(Event{Name: PreToolUse, ToolName: "edit_file"})
	want := []Hook{
		{Command: "b", Source: "p.json", Entry: "hooks.PreToolUse[1].hooks[0]"},
		{Command: "c", Timeout: 1500 * time.Millisecond, Source: "p.json", Entry: "hooks.PreToolUse[1].hooks[1]"},
	}
	if !slices.EqualFunc(got, want, func(a, b Hook) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
		t.Errorf("Matching(edit_file) = %+v, want %+v", got, want)
	}
	if got := c.Matching(Event{Name: PreToolUse, ToolName: "run_command"}); len(got) != 1 || got[0].Timeout != 30*time.Second {
		t.Errorf("Matching(run_command) = %+v, want hook a with 30s", got)
	}
}

func TestMatching(t *testing.T) {
	t.Parallel()
	tests := []struct {
		matcher string
		event   Event
		want    bool
	}{
		{"run_command|write_file", Event{Name: PreToolUse, ToolName: "run_command"}, true},
		{"run_command|write_file", Event{Name: PreToolUse, ToolName: "write_file"}, true},
		{"run_command|write_file", Event{Name: PreToolUse, ToolName: "read_file"}, false},
		{"run", Event{Name: PreToolUse, ToolName: "run_command"}, false},            // anchored: no partial match
		{"command", Event{Name: PreToolUse, ToolName: "run_command"}, false},        // anchored at the start too
		{".*_file", Event{Name: PostToolUse, ToolName: "edit_file"}, true},          // a real regexp
		{"(read|write)_file", Event{Name: PreToolUse, ToolName: "list_dir"}, false}, // …
		{"*", Event{Name: PreToolUse, ToolName: "grep"}, true},
		{"", Event{Name: PreToolUse, ToolName: "todo_write"}, true},
		{"Bash", Event{Name: PreToolUse, ToolName: "run_command"}, true},
		{"Bash", Event{Name: PreToolUse, ToolName: "read_file"}, false},
		{"Read", Event{Name: PreToolUse, ToolName: "read_file"}, true},
		{"Write", Event{Name: PreToolUse, ToolName: "write_file"}, true},
		{"Edit", Event{Name: PreToolUse, ToolName: "edit_file"}, true},
		{"MultiEdit", Event{Name: PreToolUse, ToolName: "edit_file"}, true},
		{"Edit|Write", Event{Name: PostToolUse, ToolName: "apply_patch"}, true}, // seen as the edits it makes
		{"MultiEdit", Event{Name: PreToolUse, ToolName: "apply_patch"}, true},
		{"Bash", Event{Name: PreToolUse, ToolName: "apply_patch"}, false},
		{"Edit", Event{Name: PermissionRequest, ToolName: "edit_file"}, true},
		{"Bash", Event{Name: PostToolUseFailure, ToolName: "run_command"}, true},
		{"permission_prompt", Event{Name: Notification, NotificationType: "permission_prompt"}, true},
		{"idle_prompt", Event{Name: Notification, NotificationType: "permission_prompt"}, false},
		{"other", Event{Name: SessionEnd, Reason: "other"}, true},
		{"clear", Event{Name: SessionEnd, Reason: "other"}, false},
		{"auto", Event{Name: PostCompact, Trigger: "auto"}, true},
		{"Glob", Event{Name: PreToolUse, ToolName: "glob"}, true},
		{"Grep", Event{Name: PreToolUse, ToolName: "grep"}, true},
		{"LS", Event{Name: PreToolUse, ToolName: "list_dir"}, true},
		{"TodoWrite", Event{Name: PreToolUse, ToolName: "todo_write"}, true},
		{"bash", Event{Name: PreToolUse, ToolName: "run_command"}, false}, // case-sensitive, like Claude Code
		{"Notebook.*", Event{Name: PreToolUse, ToolName: "run_command"}, false},
		{"startup", Event{Name: SessionStart, Source: "startup"}, true},
		{"startup", Event{Name: SessionStart, Source: "resume"}, false},
		{"auto", Event{Name: PreCompact, Trigger: "auto"}, true},
		{"auto", Event{Name: PreCompact, Trigger: "manual"}, false},
		{"anything", Event{Name: UserPromptSubmit, Prompt: "hi"}, true}, // no matcher for these
		{"anything", Event{Name: Stop}, true},
	}
	for _, tc := range tests {
		raw, _ := json.Marshal(map[string]any{string(tc.event.Name): []any{map[string]any{
			"matcher": tc.matcher,
			"hooks":   []any{map[string]any{"type": "command", "command": "x"}},
		}}})
		c, err := ParseConfig(raw, "s.json")
		if err != nil {
			t.Fatal(err)
		}
		if got := len(c.Matching(tc.event)) == 1; got != tc.want {
			t.Errorf("matcher %q on %s %q%q%q: matched %v, want %v", tc.matcher, tc.event.Name, tc.event.ToolName, tc.event.Source, tc.event.Trigger, got, tc.want)
		}
		// Other events never see the hook.
		other := tc.event
		other.Name = Stop
		if tc.event.Name == Stop {
			other.Name = PreToolUse
		}
		if n := len(c.Matching(other)); n != 0 {
			t.Errorf("%s hook matched %s", tc.event.Name, other.Name)
		}
	}
}

func TestMerge(t *testing.T) {
	t.Parallel()
	user, err := ParseConfig(json.RawMessage(`{"PreToolUse": [{"hooks": [{"type": "command", "command": "u1"}]}, {"matcher": "Bash", "hooks": [{"type": "command", "command": "u2"}]}]}`), "user.json")
	if err != nil {
		t.Fatal(err)
	}
	project, err := ParseConfig(json.RawMessage(`{"PreToolUse": [{"matcher": "run_command", "hooks": [{"type": "command", "command": "p1"}]}], "Stop": [{"hooks": [{"type": "command", "command": "p2"}]}]}`), "project.json")
	if err != nil {
		t.Fatal(err)
	}
	m := Merge(user, nil, project)
	var got []string
	for _, h := range m.Matching(Event{Name: PreToolUse, ToolName: "run_command"}) {
		got = append(got, h.Source+":"+h.Command)
	}
	if want := []string{"user.json:u1", "user.json:u2", "project.json:p1"}; !slices.Equal(got, want) {
		t.Errorf("merged PreToolUse hooks = %v, want %v", got, want)
	}
	if m.Len() != 4 || user.Len() != 2 || project.Len() != 2 {
		t.Errorf("Len: merged %d, user %d, project %d; want 4, 2, 2 (inputs untouched)", m.Len(), user.Len(), project.Len())
	}
	var none *Config
	if none.Len() != 0 || none.Matching(Event{Name: Stop}) != nil || Merge().Len() != 0 {
		t.Error("a nil or empty Config has hooks")
	}
}

func TestParseConfigLoadsWhatClaudeCodeAccepts(t *testing.T) {
	t.Parallel()
	const src = ".claude/settings.json"
	raw := `{
	  "PreToolUse": [{"matcher": "Bash", "statusMessage": "checking", "hooks": [
	    {"type": "command", "command": "a", "timeout": 90000, "async": true, "once": true},
	    {"type": "prompt", "prompt": "is this safe?"},
	    {"type": "command", "command": "b", "timeout": "30"},
	    {"type": "command", "command": "c", "timeout": 0}]}],
	  "TeammateIdle": [{"hooks": [{"type": "command", "command": "d"}]}],
	  "Setup": [{"hooks": [{"type": "command", "command": "e"}]}],
	  "PreToolUsed": [{"hooks": [{"type": "command", "command": "f"}]}],
	  "Notification": [{"matcher": "", "hooks": [{"type": "command", "command": "g"}]}]
	}`
	c, err := ParseConfig(json.RawMessage(raw), src)
	if err != nil {
		t.Fatalf("ParseConfig refused a Claude Code settings file: %v", err)
	}
	hooks := c.Matching(Event{Name: PreToolUse, ToolName: "run_command"})
	if len(hooks) != 3 {
		t.Fatalf("PreToolUse hooks = %+v, want a, b and c (the prompt hook skipped)", hooks)
	}
	if h := hooks[0]; !h.Async || h.Timeout != maxTimeout || string(h.Extra["once"]) != "true" {
		t.Errorf("hook a = %+v, want async, the timeout cut to %s, \"once\" kept", h, maxTimeout)
	}
	if hooks[1].Timeout != 0 || hooks[2].Timeout != 0 {
		t.Errorf("bad timeouts give the default: %v, %v", hooks[1].Timeout, hooks[2].Timeout)
	}
	if len(c.Matching(Event{Name: Notification, NotificationType: "permission_prompt"})) != 1 {
		t.Error("the Notification hook was not loaded")
	}
	notices := strings.Join(c.Notices(), "\n")
	for _, want := range []string{
		src + `: hooks.PreToolUse[0]: mx-claw ignores the key(s) "statusMessage"`,
		src + `: hooks.PreToolUse[0].hooks[0]: mx-claw ignores the key(s) "once"`,
		src + `: hooks.PreToolUse[0].hooks[1]: hooks of type "prompt" are not supported`,
		src + `: hooks.PreToolUse[0].hooks[2]: "timeout" "30" is not a number of seconds`,
		src + `: hooks.PreToolUse[0].hooks[3]: "timeout" 0 is not positive`,
		src + `: hooks.TeammateIdle: mx-claw has no TeammateIdle moment, so these hooks never run`,
		src + `: hooks.Setup: mx-claw has no Setup moment`,
		src + `: hooks.PreToolUsed: unknown hook event "PreToolUsed"`,
	} {
		if !strings.Contains(notices, want) {
			t.Errorf("notices lack %q:\n%s", want, notices)
		}
	}
	if m := Merge(c, c); len(m.Notices()) != 2*len(c.Notices()) {
		t.Error("Merge drops notices")
	}
}
