package catalog

import (
	"math"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// TestCostRecordedStreams prices the usage reported by the recorded provider
// streams. The usage is written out here (and checked against the files when
// they are present) and each expected figure is worked out by hand from the
// table's prices, in USD per million tokens.
func TestCostRecordedStreams(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file  string
		model string
		usage protocol.Usage
		want  float64
	}{
		// prompt_tokens 339 = 320 cache hits + 19 misses; 83 completion
		// tokens, 39 of them reasoning (billed as output, not again):
		// 19*0.28 + 320*0.028 + 83*0.42 = 5.32 + 8.96 + 34.86 = 49.14.
		{"deepseek-reasoner-tool-call.sse", "deepseek/deepseek-reasoner",
			protocol.Usage{InputTokens: 339, CachedTokens: 320, OutputTokens: 83, ReasoningTokens: 39}, 49.14e-6},
		// 18 misses, 219 completion tokens (205 reasoning):
		// 18*0.28 + 219*0.42 = 5.04 + 91.98 = 97.02.
		{"deepseek-reasoner-reasoning-content.sse", "deepseek/deepseek-reasoner",
			protocol.Usage{InputTokens: 18, OutputTokens: 219, ReasoningTokens: 205}, 97.02e-6},
		// 264 = 256 hits + 8 misses, 50 out:
		// 8*0.28 + 256*0.028 + 50*0.42 = 2.24 + 7.168 + 21 = 30.408.
		{"deepseek-chat-parallel-tool-calls.sse", "deepseek/deepseek-chat",
			protocol.Usage{InputTokens: 264, CachedTokens: 256, OutputTokens: 50}, 30.408e-6},
		// gpt-4o-2024-08-06 is gpt-4o: 14*2.50 + 30*10 = 35 + 300 = 335.
		{"openai-chat-text.sse", "openai/gpt-4o-2024-08-06",
			protocol.Usage{InputTokens: 14, OutputTokens: 30}, 335e-6},
		// 76*2.50 + 24*10 = 190 + 240 = 430.
		{"openai-chat-tool-call-split-args.sse", "openai/gpt-4o-2024-08-06",
			protocol.Usage{InputTokens: 76, OutputTokens: 24}, 430e-6},
		// 149*2.50 + 60*10 = 372.5 + 600 = 972.5.
		{"openai-chat-parallel-tool-calls.sse", "openai/gpt-4o-2024-08-06",
			protocol.Usage{InputTokens: 149, OutputTokens: 60}, 972.5e-6},
		// n=3: one usage for the three choices. 79*2.50 + 42*10 = 617.5.
		{"openai-chat-multiple-choices.sse", "openai/gpt-4o-2024-08-06",
			protocol.Usage{InputTokens: 79, OutputTokens: 42}, 617.5e-6},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			got, known := Cost(Lookup(tt.model, nil), tt.usage)
			if !known || math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("Cost = %v, %v; want %v, true", got, known, tt.want)
			}
			rec := readRecording(t, tt.file)
			if rec.usage != tt.usage {
				t.Errorf("%s reports usage %+v, the test assumes %+v", tt.file, rec.usage, tt.usage)
			}
			if m := Lookup(rec.model, nil); !m.Known || m.Name != Lookup(tt.model, nil).Name {
				t.Errorf("the recorded model %q looks up as %+v", rec.model, m)
			}
		})
	}
}

func TestCost(t *testing.T) {
	t.Parallel()
	f := func(v float64) *float64 { return &v }
	noCachedPrice := Model{InputPrice: f(1), OutputPrice: f(2)}
	tests := []struct {
		name  string
		m     Model
		u     protocol.Usage
		want  float64
		known bool
	}{
		{"unknown model", Lookup("ollama/llama3.1:8b", nil), protocol.Usage{InputTokens: 1000, OutputTokens: 10}, 0, false},
		{"no output price", Model{InputPrice: f(1)}, protocol.Usage{InputTokens: 1}, 0, false},
		{"no input price", Model{OutputPrice: f(1)}, protocol.Usage{OutputTokens: 1}, 0, false},
		{"zero usage", Lookup("openai/gpt-4.1", nil), protocol.Usage{}, 0, true},
		// 1M uncached at $2 + 1M out at $8.
		{"million tokens", Lookup("openai/gpt-4.1", nil), protocol.Usage{InputTokens: 1e6, OutputTokens: 1e6}, 10, true},
		// All cached: 1M at $0.50.
		{"all cached", Lookup("openai/gpt-4.1", nil), protocol.Usage{InputTokens: 1e6, CachedTokens: 1e6}, 0.5, true},
		// No cached price: cached tokens at the input price.
		{"cached at input price", noCachedPrice, protocol.Usage{InputTokens: 1e6, CachedTokens: 4e5, OutputTokens: 1e6}, 3, true},
		// More cached than input: clamped to the input.
		{"cached clamped", Lookup("openai/gpt-4.1", nil), protocol.Usage{InputTokens: 1e6, CachedTokens: 2e6}, 0.5, true},
		{"negative counts", Lookup("openai/gpt-4.1", nil), protocol.Usage{InputTokens: -5, CachedTokens: -1, OutputTokens: -7}, 0, true},
		// Reasoning tokens are inside OutputTokens.
		{"reasoning not billed twice", Lookup("openai/o4-mini", nil), protocol.Usage{OutputTokens: 1e6, ReasoningTokens: 9e5}, 4.4, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, known := Cost(tt.m, tt.u)
			if known != tt.known || math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("Cost = %v, %v; want %v, %v", got, known, tt.want, tt.known)
			}
		})
	}
}
