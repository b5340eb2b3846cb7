package llm

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryPolicy says how often and how long a client waits before sending a
// failed request again. Only failures before any response byte was read
// are retried (a retryable status line, or a connection error); a stream
// that fails later is never sent again.
//
// The zero RetryPolicy means DefaultRetryPolicy(); to disable retries set
// MaxAttempts to 1.
type RetryPolicy struct {
	// MaxAttempts is the number of attempts, the first one included.
	MaxAttempts int
	// BaseDelay is the backoff before the second attempt; it doubles for
	// each later one, up to MaxDelay.
	BaseDelay time.Duration
	// MaxDelay caps the backoff; 0 means 30s.
	MaxDelay time.Duration
	// MaxRetryAfter is the longest Retry-After a client waits for; 0 means
	// DefaultMaxRetryAfter. A provider that asks for a longer wait is not
	// retried at all: its error (with RetryAfter set) is returned at once
	// rather than after minutes of silence.
	MaxRetryAfter time.Duration
	// Rand returns a number in [0, 1) for the jitter. nil means
	// math/rand/v2's Float64; tests set it to get fixed delays.
	Rand func() float64
}

// DefaultMaxRetryAfter is the longest Retry-After honoured when the policy
// does not set MaxRetryAfter.
const DefaultMaxRetryAfter = 60 * time.Second

// DefaultRetryPolicy returns the policy used when none is set: 4 attempts,
// backoff from 500ms up to 30s.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: 4, BaseDelay: 500 * time.Millisecond, MaxDelay: 30 * time.Second}
}

// OrDefault returns p, or DefaultRetryPolicy() if p is the zero policy
// (Rand aside).
func (p RetryPolicy) OrDefault() RetryPolicy {
	if p.MaxAttempts == 0 && p.BaseDelay == 0 && p.MaxDelay == 0 && p.MaxRetryAfter == 0 {
		d := DefaultRetryPolicy()
		d.Rand = p.Rand
		return d
	}
	return p
}

// Next decides what happens after attempt number attempt (from 1) failed
// with a retryable error. It reports whether to try again and after which
// delay. retryAfter is the wait the provider asked for, or 0.
//
// Without retryAfter the delay is exponential backoff with equal jitter:
// half of min(BaseDelay·2^(attempt-1), MaxDelay) plus a random part of the
// other half, so clients that failed together spread out, yet none retries
// at once. A retryAfter up to MaxRetryAfter is used as it is, even when it
// exceeds MaxDelay: the provider knows when it will take requests again.
func (p RetryPolicy) Next(attempt int, retryAfter time.Duration) (time.Duration, bool) {
	if attempt >= p.MaxAttempts {
		return 0, false
	}
	if retryAfter > 0 {
		limit := p.MaxRetryAfter
		if limit <= 0 {
			limit = DefaultMaxRetryAfter
		}
		return retryAfter, retryAfter <= limit
	}
	return p.backoff(attempt), true
}

func (p RetryPolicy) backoff(attempt int) time.Duration {
	limit := p.MaxDelay
	if limit <= 0 {
		limit = 30 * time.Second
	}
	d := max(p.BaseDelay, 0)
	for i := 1; i < attempt && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	rnd := p.Rand
	if rnd == nil {
		rnd = rand.Float64
	}
	half := d / 2
	return half + time.Duration(rnd()*float64(d-half))
}

// ParseRetryAfter parses a Retry-After header value, either delay seconds
// or an HTTP date (relative to now). It reports false for an empty or
// malformed value; a date in the past gives 0.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if !(secs >= 0 && secs <= 1e9) { // also rejects NaN
			return 0, false
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// Sleep waits for d or until ctx is done, whichever comes first, and then
// returns ctx.Err() (nil if d passed).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
