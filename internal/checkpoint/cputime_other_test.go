//go:build !unix

package checkpoint

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
