//go:build !unix

package sandbox

import "errors"

func setLimits(Limits, bool, bool) error { return nil }

func runHelper(helperSpec) error { return errors.New("the sandbox helper needs a Unix system") }
