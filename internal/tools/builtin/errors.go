package builtin

import "errors"

// errNoWorkspace is returned when a tool is run without a workspace, which
// is a wiring bug, not the model's fault.
var errNoWorkspace = errors.New("no workspace is set for this session")
