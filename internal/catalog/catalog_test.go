package catalog

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

func ptr[T any](v T) *T { return &v }

// prices returns m's prices, with -1 for unknown.
func prices(m Model) [3]float64 {
	get := func(p *float64) float64 {
		if p == nil {
			return -1
		}
		return *p
	}
	return [3]float64{get(m.InputPrice), get(m.CachedInputPrice), get(m.OutputPrice)}
}

func TestLookup(t *testing.T) {
	t.Parallel()
	none := [3]float64{-1, -1, -1}
	tests := []struct {
		id        string
		provider  string // "" for unknown
		name      string
		window    int
		maxOutput int
		prices    [3]float64 // input, cached input, output
	}{
		{"openai/gpt-4.1", "openai", "gpt-4.1", 1_047_576, 32_768, [3]float64{2, 0.5, 8}},
		{"openai/gpt-4.1-mini", "openai", "gpt-4.1-mini", 1_047_576, 32_768, [3]float64{0.4, 0.1, 1.6}},
		{"openai/gpt-4o", "openai", "gpt-4o", 128_000, 16_384, [3]float64{2.5, 1.25, 10}},
		{"openai/o4-mini", "openai", "o4-mini", 200_000, 100_000, [3]float64{1.1, 0.275, 4.4}},
		{"openai/gpt-5", "openai", "gpt-5", 400_000, 128_000, [3]float64{1.25, 0.125, 10}},
		{"deepseek/deepseek-chat", "deepseek", "deepseek-chat", 128_000, 8_192, [3]float64{0.28, 0.028, 0.42}},
		{"deepseek/deepseek-reasoner", "deepseek", "deepseek-reasoner", 128_000, 65_536, [3]float64{0.28, 0.028, 0.42}},
		// A bare name, as a gateway serves it.
		{"gpt-4o", "openai", "gpt-4o", 128_000, 16_384, [3]float64{2.5, 1.25, 10}},
		{"mygateway/gpt-4.1-mini", "openai", "gpt-4.1-mini", 1_047_576, 32_768, [3]float64{0.4, 0.1, 1.6}},
		// OpenRouter-style ids nest the provider.
		{"openrouter/openai/gpt-4o-mini", "openai", "gpt-4o-mini", 128_000, 16_384, [3]float64{0.15, 0.075, 0.6}},
		{"openrouter/deepseek/deepseek-chat", "deepseek", "deepseek-chat", 128_000, 8_192, [3]float64{0.28, 0.028, 0.42}},
		// Dated snapshots priced like their alias.
		{"openai/gpt-4o-2024-08-06", "openai", "gpt-4o", 128_000, 16_384, [3]float64{2.5, 1.25, 10}},
		{"o4-mini-2025-04-16", "openai", "o4-mini", 200_000, 100_000, [3]float64{1.1, 0.275, 4.4}},
		// Case does not matter; surrounding space is trimmed.
		{" DeepSeek/DeepSeek-Chat ", "deepseek", "deepseek-chat", 128_000, 8_192, [3]float64{0.28, 0.028, 0.42}},
		// A known provider with a model it does not serve falls back to
		// the bare name.
		{"deepseek/gpt-4.1", "openai", "gpt-4.1", 1_047_576, 32_768, [3]float64{2, 0.5, 8}},
		// Unknown: the default window, no price.
		{"openai/gpt-4o-2024-05-13", "", "", DefaultContextWindow, DefaultMaxOutput, none},
		{"ollama/llama3.1:8b", "", "", DefaultContextWindow, DefaultMaxOutput, none},
		{"openai/", "", "", DefaultContextWindow, DefaultMaxOutput, none},
		{"", "", "", DefaultContextWindow, DefaultMaxOutput, none},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			t.Parallel()
			m := Lookup(tt.id, nil)
			if m.Provider != tt.provider || m.Name != tt.name || m.Known != (tt.provider != "") {
				t.Errorf("Lookup(%q) = %s/%s known=%v, want %s/%s", tt.id, m.Provider, m.Name, m.Known, tt.provider, tt.name)
			}
			if m.ContextWindow != tt.window || m.MaxOutput != tt.maxOutput {
				t.Errorf("Lookup(%q) window %d, max output %d; want %d, %d", tt.id, m.ContextWindow, m.MaxOutput, tt.window, tt.maxOutput)
			}
			if got := prices(m); got != tt.prices {
				t.Errorf("Lookup(%q) prices %v, want %v", tt.id, got, tt.prices)
			}
			if m.Overridden {
				t.Errorf("Lookup(%q) overridden without overrides", tt.id)
			}
		})
	}
}

// TestLookupTableSane checks every built-in entry: a positive window larger
// than the output limit, all three prices, a cached price no higher than
// the input price, and no name served twice.
func TestLookupTableSane(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, e := range builtin {
		names := append([]string{e.name}, e.aliases...)
		for _, n := range names {
			if seen[n] {
				t.Errorf("%s listed twice", n)
			}
			seen[n] = true
			if m := Lookup(n, nil); m.Name != e.name || m.Provider != e.provider {
				t.Errorf("Lookup(%q) = %s/%s, want %s/%s", n, m.Provider, m.Name, e.provider, e.name)
			}
		}
		if e.window <= 0 || e.maxOutput <= 0 || e.maxOutput >= e.window {
			t.Errorf("%s: window %d, max output %d", e.name, e.window, e.maxOutput)
		}
		if e.input < 0 || e.output < 0 || e.cached < 0 || e.cached > e.input {
			t.Errorf("%s: prices %v/%v/%v", e.name, e.input, e.cached, e.output)
		}
	}
}

func TestLookupOverrides(t *testing.T) {
	t.Parallel()
	overrides := map[string]Override{
		// A price for gpt-4o wherever it is served.
		"gpt-4o": {InputPrice: ptr(3.0), OutputPrice: ptr(12.0)},
		// This gateway's window for it, and its own output price.
		"mygw/gpt-4o": {ContextWindow: ptr(64_000), OutputPrice: ptr(11.0)},
		// A local model made known.
		"ollama/qwen3:8b": {ContextWindow: ptr(40_960), MaxOutput: ptr(8_192), InputPrice: ptr(0.0), OutputPrice: ptr(0.0)},
		// Invalid fields are ignored, valid ones apply.
		"openai/gpt-4.1": {ContextWindow: ptr(-1), MaxOutput: ptr(0), InputPrice: ptr(math.NaN()), CachedInputPrice: ptr(0.4)},
	}
	tests := []struct {
		id         string
		window     int
		maxOutput  int
		prices     [3]float64
		known      bool
		overridden bool
	}{
		{"openai/gpt-4o", 128_000, 16_384, [3]float64{3, 1.25, 12}, true, true},
		{"mygw/gpt-4o", 64_000, 16_384, [3]float64{3, 1.25, 11}, true, true},
		{"ollama/qwen3:8b", 40_960, 8_192, [3]float64{0, -1, 0}, false, true},
		{"qwen3:8b", DefaultContextWindow, DefaultMaxOutput, [3]float64{-1, -1, -1}, false, false},
		{"openai/gpt-4.1", 1_047_576, 32_768, [3]float64{2, 0.4, 8}, true, true},
		// Keys match exactly: no prefix or case folding.
		{"openai/gpt-4o-mini", 128_000, 16_384, [3]float64{0.15, 0.075, 0.6}, true, false},
		{"MYGW/gpt-4o", 128_000, 16_384, [3]float64{3, 1.25, 12}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			t.Parallel()
			m := Lookup(tt.id, overrides)
			if m.ContextWindow != tt.window || m.MaxOutput != tt.maxOutput {
				t.Errorf("window %d, max output %d; want %d, %d", m.ContextWindow, m.MaxOutput, tt.window, tt.maxOutput)
			}
			if got := prices(m); got != tt.prices {
				t.Errorf("prices %v, want %v", got, tt.prices)
			}
			if m.Known != tt.known || m.Overridden != tt.overridden {
				t.Errorf("known=%v overridden=%v, want %v, %v", m.Known, m.Overridden, tt.known, tt.overridden)
			}
		})
	}
	// With prices from config, an unknown model's cost is known.
	if usd, known := Cost(Lookup("ollama/qwen3:8b", overrides), protocol.Usage{InputTokens: 1000, OutputTokens: 100}); !known || usd != 0 {
		t.Errorf("Cost of an overridden free model = %v, %v", usd, known)
	}
}

// TestLookupReturnsCopies checks that writing through a returned price
// pointer leaves the table alone.
func TestLookupReturnsCopies(t *testing.T) {
	t.Parallel()
	m := Lookup("openai/gpt-4.1", nil)
	*m.InputPrice = 99
	if got := *Lookup("openai/gpt-4.1", nil).InputPrice; got != 2 {
		t.Fatalf("table changed through a returned pointer: input price %v", got)
	}
}

func TestOverrideValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		o    Override
		ok   bool
	}{
		{"empty", Override{}, true},
		{"all set", Override{ContextWindow: ptr(1), MaxOutput: ptr(1), InputPrice: ptr(0.0), CachedInputPrice: ptr(0.1), OutputPrice: ptr(1.0)}, true},
		{"zero window", Override{ContextWindow: ptr(0)}, false},
		{"negative output", Override{MaxOutput: ptr(-5)}, false},
		{"negative price", Override{OutputPrice: ptr(-0.1)}, false},
		{"NaN price", Override{InputPrice: ptr(math.NaN())}, false},
		{"infinite price", Override{CachedInputPrice: ptr(math.Inf(1))}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := tt.o.Validate(); (err == nil) != tt.ok {
				t.Errorf("Validate() = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

// TestOverrideJSON checks the config shape of an override.
func TestOverrideJSON(t *testing.T) {
	t.Parallel()
	var got map[string]Override
	const in = `{"mygw/gpt-4o": {"contextWindow": 64000, "maxOutputTokens": 4096, "inputPrice": 2.5, "cachedInputPrice": 1.25, "outputPrice": 10}}`
	if err := json.Unmarshal([]byte(in), &got); err != nil {
		t.Fatal(err)
	}
	m := Lookup("mygw/gpt-4o", got)
	if m.ContextWindow != 64000 || m.MaxOutput != 4096 || prices(m) != [3]float64{2.5, 1.25, 10} {
		t.Errorf("decoded override gives %+v", m)
	}
	out, err := json.Marshal(Override{OutputPrice: ptr(1.5)})
	if err != nil || string(out) != `{"outputPrice":1.5}` {
		t.Errorf("Marshal = %s, %v", out, err)
	}
}
