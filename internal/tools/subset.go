package tools

import (
	"encoding/json"
	"slices"
)

// Only returns a registry of r's tools whose names are in names, in r's
// order, reusing r's compiled schemas; names r does not have are ignored.
// A subagent's session gets such a subset of its parent's tools.
func (r *Registry) Only(names ...string) *Registry {
	out := &Registry{entries: make(map[string]*entry, len(names))}
	for _, t := range r.tools {
		if name := t.Info().Name; slices.Contains(names, name) {
			out.tools = append(out.tools, t)
			out.entries[name] = r.entries[name]
		}
	}
	return out
}

// Names returns the names of r's tools, in order.
func (r *Registry) Names() []string {
	out := make([]string, len(r.tools))
	for i, t := range r.tools {
		out[i] = t.Info().Name
	}
	return out
}

// CallConcurrency is implemented by a concurrency-safe tool of which only
// some calls may run beside others, depending on their arguments (the
// task tool: a read-only subagent may, one that writes in the user's tree
// may not). args have passed schema validation.
type CallConcurrency interface {
	ConcurrentCall(args json.RawMessage) bool
}
