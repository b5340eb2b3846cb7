package agent

import _ "embed"

// DefaultSystemPrompt is the system message frozen into a new session when
// the Core is given none.
//
//go:embed prompts/system.md
var DefaultSystemPrompt string
