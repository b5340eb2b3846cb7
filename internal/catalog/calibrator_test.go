package catalog

import (
	"math"
	"sync"
	"testing"
)

func TestCalibratorConverges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		ratio float64 // reported/estimated, the provider's true bias
		want  float64 // the ratio the calibrator settles on
	}{
		{"estimate low", 1.3, 1.3},
		{"estimate high", 0.8, 0.8},
		{"exact", 1, 1},
		{"clamped high", 3, MaxCalibration},
		{"clamped low", 0.2, MinCalibration},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var c Calibrator
			// Noisy observations around the true ratio, ±10 %.
			for i := range 40 {
				est := 1000 + 37*i
				noise := 1 + 0.1*math.Sin(float64(i))
				c.Observe(est, int(float64(est)*tt.ratio*noise))
			}
			if got := c.Ratio(); math.Abs(got-tt.want) > 0.1*tt.want {
				t.Errorf("Ratio() = %.3f, want about %.3f", got, tt.want)
			}
			if got := c.Ratio(); got < MinCalibration || got > MaxCalibration {
				t.Errorf("Ratio() = %v, outside the bounds", got)
			}
		})
	}
}

// TestCalibratorTracksChange checks that the average follows a change of
// bias (say, a model switch in a resumed session) within a few requests.
func TestCalibratorTracksChange(t *testing.T) {
	t.Parallel()
	var c Calibrator
	for range 20 {
		c.Observe(1000, 1200)
	}
	if got := c.Ratio(); math.Abs(got-1.2) > 1e-9 {
		t.Fatalf("Ratio() = %v after a steady 1.2", got)
	}
	steps := 0
	for math.Abs(c.Ratio()-0.9) > 0.03 {
		c.Observe(1000, 900)
		if steps++; steps > 20 {
			t.Fatalf("still at %v after 20 observations of 0.9", c.Ratio())
		}
	}
	if steps > 10 {
		t.Errorf("took %d observations to follow the change", steps)
	}
}

func TestCalibratorAdjust(t *testing.T) {
	t.Parallel()
	var c Calibrator
	if got := c.Adjust(1000); got != 1000 {
		t.Errorf("zero value Adjust(1000) = %d", got)
	}
	var nilC *Calibrator
	nilC.Observe(10, 20)
	if got := nilC.Adjust(1000); got != 1000 || nilC.Ratio() != 1 {
		t.Errorf("nil calibrator Adjust(1000) = %d, Ratio %v", got, nilC.Ratio())
	}
	c.Observe(0, 50)   // ignored
	c.Observe(50, 0)   // ignored
	c.Observe(-5, -10) // ignored
	if got := c.Ratio(); got != 1 {
		t.Errorf("Ratio() = %v after invalid observations", got)
	}
	c.Observe(1000, 1250)
	if got := c.Adjust(1000); got != 1250 {
		t.Errorf("Adjust(1000) = %d after one observation of 1.25, want 1250", got)
	}
	if got := c.Adjust(0); got != 0 {
		t.Errorf("Adjust(0) = %d", got)
	}
	if got := c.Adjust(-3); got != -3 {
		t.Errorf("Adjust(-3) = %d", got)
	}
}

func TestCalibratorConcurrent(t *testing.T) {
	t.Parallel()
	var c Calibrator
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				c.Observe(1000, 1100)
				_ = c.Adjust(500)
			}
		})
	}
	wg.Wait()
	if got := c.Ratio(); math.Abs(got-1.1) > 1e-9 {
		t.Errorf("Ratio() = %v", got)
	}
}
