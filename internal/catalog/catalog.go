package catalog

import (
	"fmt"
	"math"
	"strings"
)

// DefaultContextWindow is the context window, in tokens, assumed for a model
// the table does not know. It is deliberately small: compacting early costs
// a summary, overflowing a real window costs the turn.
const DefaultContextWindow = 32_768

// DefaultMaxOutput is the output limit, in tokens, assumed for a model the
// table does not know.
const DefaultMaxOutput = 4_096

// Model is what mx-claw knows about one model. Lookup returns a fresh value;
// changing it (or what its price pointers point to) changes nothing else.
type Model struct {
	// ID is the id Lookup was asked for, such as "openai/gpt-4.1".
	ID string
	// Provider and Name name the built-in entry that matched, such as
	// "openai" and "gpt-4.1"; both are empty for an unknown model.
	Provider string
	Name     string
	// Known reports whether the model matched the built-in table.
	Known bool
	// Overridden reports whether a config override changed any field.
	Overridden bool
	// ContextWindow is the number of tokens the model can attend to, prompt
	// and completion together, as the provider documents it.
	ContextWindow int
	// MaxOutput is the most tokens the model writes in one response,
	// reasoning included.
	MaxOutput int
	// InputPrice, CachedInputPrice and OutputPrice are list prices in USD
	// per million tokens: prompt tokens not served from the provider's cache,
	// prompt tokens served from it, and completion tokens (reasoning
	// included). nil means unknown.
	InputPrice       *float64
	CachedInputPrice *float64
	OutputPrice      *float64
	// Images says the model reads images sent as image content parts.
	Images bool
}

// Override changes what the table says about one model. It is the shape of
// a per-model entry in config.json; every field is optional and a nil field
// keeps the table's value. Prices are USD per million tokens.
type Override struct {
	ContextWindow    *int     `json:"contextWindow,omitempty"`
	MaxOutput        *int     `json:"maxOutputTokens,omitempty"`
	InputPrice       *float64 `json:"inputPrice,omitempty"`
	CachedInputPrice *float64 `json:"cachedInputPrice,omitempty"`
	OutputPrice      *float64 `json:"outputPrice,omitempty"`
	// Images says whether the model reads images.
	Images *bool `json:"images,omitempty"`
}

// Validate reports the first field of o that Lookup would ignore: a window
// or output limit that is not positive, or a price that is negative or not
// a finite number. Config should call it when it loads overrides.
func (o Override) Validate() error {
	if o.ContextWindow != nil && *o.ContextWindow <= 0 {
		return fmt.Errorf("contextWindow %d is not positive", *o.ContextWindow)
	}
	if o.MaxOutput != nil && *o.MaxOutput <= 0 {
		return fmt.Errorf("maxOutputTokens %d is not positive", *o.MaxOutput)
	}
	for _, p := range [...]struct {
		field string
		v     *float64
	}{
		{"inputPrice", o.InputPrice},
		{"cachedInputPrice", o.CachedInputPrice},
		{"outputPrice", o.OutputPrice},
	} {
		if p.v != nil && !validPrice(*p.v) {
			return fmt.Errorf("%s %v is not a non-negative number", p.field, *p.v)
		}
	}
	return nil
}

func validPrice(v float64) bool { return v >= 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }

// apply returns m with o's valid fields set.
func (o Override) apply(m Model) Model {
	if o.ContextWindow != nil && *o.ContextWindow > 0 {
		m.ContextWindow = *o.ContextWindow
		m.Overridden = true
	}
	if o.MaxOutput != nil && *o.MaxOutput > 0 {
		m.MaxOutput = *o.MaxOutput
		m.Overridden = true
	}
	set := func(dst **float64, v *float64) {
		if v != nil && validPrice(*v) {
			*dst = price(*v)
			m.Overridden = true
		}
	}
	set(&m.InputPrice, o.InputPrice)
	set(&m.CachedInputPrice, o.CachedInputPrice)
	set(&m.OutputPrice, o.OutputPrice)
	if o.Images != nil {
		m.Images = *o.Images
		m.Overridden = true
	}
	return m
}

// Lookup returns what is known about the model id, with overrides applied.
//
// id is a model id as mx-claw writes it, "provider/model", or a bare model
// name. The table is searched with id first, then with each shorter id left
// by removing the leading "segment/": "openrouter/openai/gpt-4o" tries
// "openrouter/openai/gpt-4o", "openai/gpt-4o", then "gpt-4o". A key with a
// provider matches that provider's entry only; a bare name matches any
// provider's, so a gateway that serves "gpt-4o" under a custom provider gets
// gpt-4o's window and price. Matching ignores case. A model found nowhere
// gets DefaultContextWindow, DefaultMaxOutput and no prices.
//
// overrides is keyed the same way, by "provider/model" or bare model name,
// matched exactly. Every key that matches one of the ids above applies, the
// least specific first, so "gpt-4o" can set a price for every provider that
// serves it while "mygw/gpt-4o" sets that gateway's window. Invalid override
// fields (see Override.Validate) are ignored.
func Lookup(id string, overrides map[string]Override) Model {
	id = strings.TrimSpace(id)
	m := Model{ID: id, ContextWindow: DefaultContextWindow, MaxOutput: DefaultMaxOutput}
	for key := id; key != ""; key = shorter(key) {
		if e := find(key); e != nil {
			m = e.model(id)
			break
		}
	}
	if len(overrides) == 0 {
		return m
	}
	var keys []string
	for key := id; key != ""; key = shorter(key) {
		keys = append(keys, key)
	}
	for i := len(keys) - 1; i >= 0; i-- {
		if o, ok := overrides[keys[i]]; ok {
			m = o.apply(m)
		}
	}
	return m
}

// shorter drops id's leading "segment/", or returns "" if there is none.
func shorter(id string) string {
	_, rest, ok := strings.Cut(id, "/")
	if !ok {
		return ""
	}
	return rest
}

// find returns the table entry for key, "provider/model" or a bare name.
func find(key string) *entry {
	provider, name, hasProvider := strings.Cut(key, "/")
	if !hasProvider {
		provider, name = "", key
	}
	for i := range builtin {
		e := &builtin[i]
		if hasProvider && !strings.EqualFold(e.provider, provider) {
			continue
		}
		if e.matches(name) {
			return e
		}
	}
	return nil
}

func (e *entry) matches(name string) bool {
	if strings.EqualFold(e.name, name) {
		return true
	}
	for _, a := range e.aliases {
		if strings.EqualFold(a, name) {
			return true
		}
	}
	return false
}

// model returns e as a Model with fresh price pointers.
func (e *entry) model(id string) Model {
	return Model{
		ID: id, Provider: e.provider, Name: e.name, Known: true,
		ContextWindow: e.window, MaxOutput: e.maxOutput,
		InputPrice: price(e.input), CachedInputPrice: price(e.cached), OutputPrice: price(e.output),
		Images: e.images,
	}
}

// price returns a pointer to a copy of v, or nil if v is unknown.
func price(v float64) *float64 {
	if v < 0 {
		return nil
	}
	return &v
}
