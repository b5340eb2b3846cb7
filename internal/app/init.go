package app

import (
	_ "embed"
	"strings"
)

//go:embed init.md
var initPrompt string

// InitPrompt is the message of /init and `mx-claw init`: survey the
// repository and write or improve AGENTS.md, as an edit the user
// approves. extra, if set, is the user's own instructions, added.
func InitPrompt(extra string) string {
	p := strings.TrimSpace(initPrompt)
	if extra = strings.TrimSpace(extra); extra != "" {
		p += "\n\nThe user adds: " + extra
	}
	return p
}

// InitPrompt is the message of the REPL's /init (see the package
// function).
func (b *Backend) InitPrompt(extra string) string { return InitPrompt(extra) }
