package protocol

import "time"

// FrozenContext is what a session's system prompt was frozen with beyond
// its instructions and environment (DESIGN §2, invariant 4): the long-term
// memory files and the skills it may load. It is the payload of
// context.frozen, stored with the session's first message; the skill tool
// loads skills from this list, so a skill added later reaches new
// sessions only.
type FrozenContext struct {
	// Memory are the memory files in the prompt, in its order.
	Memory []FrozenMemory `json:"memory,omitempty"`
	// Skills are the skills the session may load, sorted by name;
	// Listed marks those its index shows.
	Skills []FrozenSkill `json:"skills,omitempty"`
}

// FrozenMemory is one memory file as a session's prompt holds it.
type FrozenMemory struct {
	// Label names the file: "USER.md", "MEMORY.md", ".mx-claw/MEMORY.md".
	Label string `json:"label"`
	Path  string `json:"path"`
	// Bytes is the file's size; Cut says the prompt holds only its
	// beginning; SHA256 is the digest of the whole file.
	Bytes  int64  `json:"bytes"`
	Cut    bool   `json:"cut,omitempty"`
	SHA256 string `json:"sha256"`
}

// FrozenSkill is one skill a session may load.
type FrozenSkill struct {
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	AllowedTools []string `json:"allowedTools,omitempty"`
	// Dir is the skill's folder; Base, if set, the tree it must not
	// leave (a workspace, a plugin).
	Dir  string `json:"dir"`
	Base string `json:"base,omitempty"`
	// Source is "user", "project" or "plugin:NAME".
	Source string `json:"source"`
	// Listed says the system prompt's index shows it; the others are
	// found by the skill tool's search.
	Listed bool `json:"listed,omitempty"`
}

// MemoryCandidate is a request to remember found in a user's message,
// waiting for a person (payload of memory.candidate).
type MemoryCandidate struct {
	ID string `json:"id"`
	// File is the memory file it goes to once accepted.
	File string `json:"file"`
	Text string `json:"text"`
	// Quote is the user's sentence it came from; MessageSeq its message.
	Quote      string    `json:"quote"`
	MessageSeq int64     `json:"messageSeq,omitempty"`
	CreatedAt  time.Time `json:"createdAt"`
}

// SkillProposal is a skill the model proposed from a finished turn,
// waiting for a person (payload of skill.proposed).
type SkillProposal struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Dir         string `json:"dir"`
	// TurnID is the turn it was learned from.
	TurnID string `json:"turnId"`
}

// SlashCommand describes a custom slash command for a front end's help
// and completion.
type SlashCommand struct {
	Name         string `json:"name"`
	ArgumentHint string `json:"argumentHint,omitempty"`
	Description  string `json:"description"`
	// Source is "user", "project" or "plugin:NAME".
	Source string `json:"source"`
}
