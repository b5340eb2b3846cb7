package catalog

import (
	"math"
	"sync"
)

// The bounds of a Calibrator's ratio. A provider that counts more than
// twice or less than half of what Estimate says is more likely reporting
// something else (tool definitions, images) than tokenizing differently.
const (
	MinCalibration = 0.5
	MaxCalibration = 2.0
)

// calibrationWeight is the weight of a new observation in the moving
// average: about the last five requests dominate.
const calibrationWeight = 0.3

// Calibrator learns how a provider's token counts relate to Estimate's and
// corrects later estimates. It keeps an exponential moving average of
// reported/estimated prompt tokens, bounded to [MinCalibration,
// MaxCalibration]; before its first observation the ratio is 1.
//
// Keep one per session (or per model): tokenizers differ between models. The
// zero value is ready to use, a nil *Calibrator corrects nothing, and the
// methods are safe for concurrent use.
type Calibrator struct {
	mu    sync.Mutex
	ratio float64 // 0 until the first observation
}

// Observe records that a prompt Estimate put at estimated tokens was counted
// as reported tokens by the provider (its usage prompt_tokens). estimated
// must be the raw estimate of the same request, not an adjusted one.
// Observations with a non-positive count are ignored.
func (c *Calibrator) Observe(estimated, reported int) {
	if c == nil || estimated <= 0 || reported <= 0 {
		return
	}
	r := min(max(float64(reported)/float64(estimated), MinCalibration), MaxCalibration)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ratio == 0 {
		c.ratio = r
		return
	}
	c.ratio += calibrationWeight * (r - c.ratio)
}

// Ratio returns the current correction factor: 1 before any observation.
func (c *Calibrator) Ratio() float64 {
	if c == nil {
		return 1
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ratio == 0 {
		return 1
	}
	return c.ratio
}

// Adjust returns estimate corrected by the current ratio, rounded to the
// nearest token. A non-positive estimate is returned unchanged.
func (c *Calibrator) Adjust(estimate int) int {
	if estimate <= 0 {
		return estimate
	}
	return int(math.Round(float64(estimate) * c.Ratio()))
}
