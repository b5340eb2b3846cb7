package hooks

import "errors"

// ErrInvalidConfig is matched (with errors.Is) by every error ParseConfig
// returns.
var ErrInvalidConfig = errors.New("invalid hooks configuration")

// ConfigError reports a malformed hooks configuration, naming the settings
// file and the offending entry.
type ConfigError struct {
	// Source is the settings file the configuration came from.
	Source string
	// Field is the entry, e.g. "hooks.PreToolUse[0].hooks[1]".
	Field string
	// Err is what is wrong with it.
	Err error
}

// Error returns "<source>: <field>: <problem>".
func (e *ConfigError) Error() string {
	s := ""
	if e.Source != "" {
		s = e.Source + ": "
	}
	if e.Field != "" {
		s += e.Field + ": "
	}
	return s + e.Err.Error()
}

// Unwrap returns the underlying problem.
func (e *ConfigError) Unwrap() error { return e.Err }

// Is makes a ConfigError match ErrInvalidConfig.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }
