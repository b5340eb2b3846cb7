package llm

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestRetryPolicyNext(t *testing.T) {
	t.Parallel()
	fixed := func(v float64) func() float64 { return func() float64 { return v } }
	p := RetryPolicy{MaxAttempts: 6, BaseDelay: 500 * time.Millisecond, MaxDelay: 3 * time.Second}
	tests := []struct {
		name       string
		rand       float64
		attempt    int
		retryAfter time.Duration
		want       time.Duration
		ok         bool
	}{
		{"first, low jitter", 0, 1, 0, 250 * time.Millisecond, true},
		{"first, high jitter", 0.999999999, 1, 0, 500 * time.Millisecond, true},
		{"second doubles", 0.5, 2, 0, 750 * time.Millisecond, true},
		{"third", 0, 3, 0, time.Second, true},
		{"capped at MaxDelay", 1 - 1e-12, 5, 0, 3 * time.Second, true},
		{"retry-after wins over backoff", 0, 1, 7 * time.Second, 7 * time.Second, true},
		{"retry-after at the bound", 0, 1, DefaultMaxRetryAfter, DefaultMaxRetryAfter, true},
		{"retry-after past the bound stops", 0, 1, 10 * time.Minute, 10 * time.Minute, false},
		{"attempts spent", 0, 6, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := p
			p.Rand = fixed(tt.rand)
			got, ok := p.Next(tt.attempt, tt.retryAfter)
			if ok != tt.ok || (ok && got.Round(time.Millisecond) != tt.want) {
				t.Errorf("Next(%d, %v) = %v, %v; want %v, %v", tt.attempt, tt.retryAfter, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestRetryPolicyDefaults(t *testing.T) {
	t.Parallel()
	d := RetryPolicy{}.OrDefault()
	if d.MaxAttempts != 4 || d.BaseDelay != 500*time.Millisecond || d.MaxDelay != 30*time.Second {
		t.Fatalf("zero policy became %+v", d)
	}
	one := RetryPolicy{MaxAttempts: 1}.OrDefault()
	if _, ok := one.Next(1, 0); ok {
		t.Fatal("MaxAttempts 1 retried")
	}
	// Huge attempt numbers must not overflow the backoff.
	p := DefaultRetryPolicy()
	p.Rand = func() float64 { return 0.5 }
	if got, ok := p.Next(3, 0); !ok || got != 1500*time.Millisecond {
		t.Fatalf("Next(3) = %v, %v", got, ok)
	}
	p.MaxAttempts = 1 << 30
	if got, _ := p.Next(1<<29, 0); got <= 0 || got > 30*time.Second {
		t.Fatalf("Next(2^29) = %v", got)
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"3", 3 * time.Second, true},
		{" 0 ", 0, true},
		{"1.5", 1500 * time.Millisecond, true},
		{"Sun, 01 Mar 2026 12:00:20 GMT", 20 * time.Second, true},
		{"Sun, 01 Mar 2026 11:00:00 GMT", 0, true},
		{"", 0, false},
		{"-1", 0, false},
		{"NaN", 0, false},
		{"soon", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSleep(t *testing.T) {
	t.Parallel()
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > time.Second {
		t.Fatal("Sleep did not return promptly on cancel")
	}
}
