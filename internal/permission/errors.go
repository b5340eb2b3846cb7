package permission

import (
	"errors"
	"strconv"
)

// ErrInvalidRule is matched (with errors.Is) by every error ParseRule
// returns.
var ErrInvalidRule = errors.New("invalid rule")

// ErrInvalidMode is matched by the error ParseMode returns for an unknown
// mode.
var ErrInvalidMode = errors.New("invalid permission mode")

// ErrInvalidSettings is matched by every error about a malformed settings
// file.
var ErrInvalidSettings = errors.New("invalid settings")

// ErrSymlinkedConfig is matched by the error for a project configuration
// directory or file that is a symbolic link.
var ErrSymlinkedConfig = errors.New("symbolic link refused as project configuration")

// RuleError reports a rule that cannot be parsed.
type RuleError struct {
	// Rule is the rule text as written.
	Rule string
	// Problem says what is wrong, e.g. `missing ")"`.
	Problem string
}

// Error returns `"<rule>" is not a valid rule: <problem>`.
func (e *RuleError) Error() string {
	return strconv.Quote(e.Rule) + " is not a valid rule: " + e.Problem
}

// Is makes a RuleError match ErrInvalidRule.
func (e *RuleError) Is(target error) bool { return target == ErrInvalidRule }

// SettingsError reports a malformed settings file, naming the file and the
// offending entry.
type SettingsError struct {
	// Path is the settings file.
	Path string
	// Field is the entry, e.g. "permissions.allow[2]"; empty when the file
	// as a whole is malformed.
	Field string
	// Err is what is wrong with it.
	Err error
}

// Error returns "<path>: <field>: <problem>".
func (e *SettingsError) Error() string {
	s := e.Path + ": "
	if e.Field != "" {
		s += e.Field + ": "
	}
	return s + e.Err.Error()
}

// Unwrap returns the underlying problem.
func (e *SettingsError) Unwrap() error { return e.Err }

// Is makes a SettingsError match ErrInvalidSettings.
func (e *SettingsError) Is(target error) bool { return target == ErrInvalidSettings }
