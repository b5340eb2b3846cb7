package catalog

// entry is one row of the built-in table. Prices are USD per million tokens,
// or unknown.
type entry struct {
	provider, name string
	// aliases are other names the provider serves the same model under at
	// the same price (dated snapshots).
	aliases           []string
	window, maxOutput int
	input, cached     float64
	output            float64
	// images says the model reads images (image content parts).
	images bool
}

// builtin is the model table. It is never written after initialisation;
// Lookup copies what it returns.
//
// Sources and dates:
//
// OpenAI: list prices of the Standard tier (not Batch, Flex or Priority)
// from openai.com/api/pricing as published in 2025 (gpt-4.1 family since its
// launch on 2025-04-14, o3 since its price cut on 2025-06-10, gpt-5 family
// since 2025-08-07), and still the figures third-party trackers listed for
// these models in mid-2026. Context windows and output limits are the model
// pages' figures, cross-checked against the model metadata shipped in the
// npm package gpt-tokenizer 4.0.0 (generated from OpenAI's model pages).
// gpt-4o-2024-05-13 is not an alias of gpt-4o: it was priced higher and
// writes at most 4,096 tokens.
//
// DeepSeek: api-docs.deepseek.com/quick_start/pricing, the price list of
// 2025-09-29 (DeepSeek-V3.2 behind both aliases, at one price: cache hit
// $0.028, cache miss $0.28, output $0.42 per million tokens; context 128K;
// output at most 8K for deepseek-chat and 64K for deepseek-reasoner), still
// the published list in April 2026. DeepSeek has since announced V4 models
// with time-of-day prices and may remap or retire these aliases: override
// the prices in config if the bill differs. The windows take "128K" as
// 128,000 rather than 131,072, the conservative reading.
//
// Images: every OpenAI model listed reads images (its model page lists
// image input); DeepSeek's chat API takes text only.
var builtin = [...]entry{
	{provider: "openai", name: "gpt-4.1", aliases: []string{"gpt-4.1-2025-04-14"},
		window: 1_047_576, maxOutput: 32_768, input: 2.00, cached: 0.50, output: 8.00, images: true},
	{provider: "openai", name: "gpt-4.1-mini", aliases: []string{"gpt-4.1-mini-2025-04-14"},
		window: 1_047_576, maxOutput: 32_768, input: 0.40, cached: 0.10, output: 1.60, images: true},
	{provider: "openai", name: "gpt-4.1-nano", aliases: []string{"gpt-4.1-nano-2025-04-14"},
		window: 1_047_576, maxOutput: 32_768, input: 0.10, cached: 0.025, output: 0.40, images: true},
	{provider: "openai", name: "gpt-4o", aliases: []string{"gpt-4o-2024-08-06", "gpt-4o-2024-11-20"},
		window: 128_000, maxOutput: 16_384, input: 2.50, cached: 1.25, output: 10.00, images: true},
	{provider: "openai", name: "gpt-4o-mini", aliases: []string{"gpt-4o-mini-2024-07-18"},
		window: 128_000, maxOutput: 16_384, input: 0.15, cached: 0.075, output: 0.60, images: true},
	{provider: "openai", name: "o4-mini", aliases: []string{"o4-mini-2025-04-16"},
		window: 200_000, maxOutput: 100_000, input: 1.10, cached: 0.275, output: 4.40, images: true},
	{provider: "openai", name: "o3", aliases: []string{"o3-2025-04-16"},
		window: 200_000, maxOutput: 100_000, input: 2.00, cached: 0.50, output: 8.00, images: true},
	// The gpt-5 family accepts at most 272,000 input tokens: the window
	// minus the output limit.
	{provider: "openai", name: "gpt-5", aliases: []string{"gpt-5-2025-08-07"},
		window: 400_000, maxOutput: 128_000, input: 1.25, cached: 0.125, output: 10.00, images: true},
	{provider: "openai", name: "gpt-5-mini", aliases: []string{"gpt-5-mini-2025-08-07"},
		window: 400_000, maxOutput: 128_000, input: 0.25, cached: 0.025, output: 2.00, images: true},
	{provider: "openai", name: "gpt-5-nano", aliases: []string{"gpt-5-nano-2025-08-07"},
		window: 400_000, maxOutput: 128_000, input: 0.05, cached: 0.005, output: 0.40, images: true},

	{provider: "deepseek", name: "deepseek-chat",
		window: 128_000, maxOutput: 8_192, input: 0.28, cached: 0.028, output: 0.42},
	{provider: "deepseek", name: "deepseek-reasoner",
		window: 128_000, maxOutput: 65_536, input: 0.28, cached: 0.028, output: 0.42},
}
