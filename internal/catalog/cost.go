package catalog

import "github.com/mx-claw/mx-claw/internal/protocol"

// Cost returns the list price in USD of the usage u on model m, and whether
// it is known. It is unknown (0, false) when m has no input or no output
// price; nothing is guessed.
//
// The convention is OpenAI's, which the chat-completions decoder keeps for
// every provider: u.InputTokens counts the whole prompt and u.CachedTokens
// is the part of it served from the provider's cache (OpenAI's
// prompt_tokens_details.cached_tokens; DeepSeek's prompt_cache_hit_tokens,
// whose complement prompt_cache_miss_tokens makes up the rest of
// prompt_tokens). So the cost is
//
//	(InputTokens-CachedTokens)*InputPrice + CachedTokens*CachedInputPrice
//	  + OutputTokens*OutputPrice
//
// per million tokens. u.ReasoningTokens are already part of OutputTokens and
// are not billed again. Cached tokens are clamped to the prompt, and
// negative counts are taken as zero. If m has no cached-input price, cached
// tokens are billed at the input price: an upper bound, since no provider
// charges more for a cache hit, and the safe side for a budget.
func Cost(m Model, u protocol.Usage) (usd float64, known bool) {
	if m.InputPrice == nil || m.OutputPrice == nil {
		return 0, false
	}
	in := max(u.InputTokens, 0)
	cached := min(max(u.CachedTokens, 0), in)
	out := max(u.OutputTokens, 0)
	cachedPrice := *m.InputPrice
	if m.CachedInputPrice != nil {
		cachedPrice = *m.CachedInputPrice
	}
	micro := float64(in-cached)*(*m.InputPrice) + float64(cached)*cachedPrice + float64(out)*(*m.OutputPrice)
	return micro / 1e6, true
}
