//go:build !race

package builtin

// raceDetector reports whether the tests run with the race detector, which
// makes the 50 MB edit test too slow to be worth it.
const raceDetector = false
