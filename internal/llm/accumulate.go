package llm

import (
	"cmp"
	"slices"
)

// ToolCallAccumulator assembles the tool calls of one streamed choice from
// their deltas. In the OpenAI chat stream a call's first delta carries its
// index, id and name; later deltas carry only the index and a piece of the
// arguments, which are joined in arrival order. Calls of one response may
// stream one after the other or interleaved; each is keyed by its index.
// A client that follows several choices keeps one accumulator per choice.
//
// Providers bend this in two ways, both handled. Some send no index: a
// delta with a new id then starts a new call, and one without an id
// continues the last call. Some give every call of a response the same
// index: a delta whose id differs from the id already recorded for its
// index starts a new call, ordered after the earlier ones.
//
// MaxArgs, when set, caps each call's arguments: past it they are dropped
// as they arrive (counted by Dropped), and the call is returned with
// TooLarge set and no arguments, so a runaway call never fills memory.
//
// The zero ToolCallAccumulator is ready to use. It is not safe for
// concurrent use.
type ToolCallAccumulator struct {
	// MaxArgs caps one call's arguments in bytes; 0 means no cap.
	MaxArgs int
	calls   []pendingCall
	dropped int64
}

type pendingCall struct {
	index int
	id    string
	name  string
	// args holds the arguments while they are one piece; buf takes over
	// from the second piece on, so a call sent whole is never copied.
	args string
	buf  []byte
	// size counts the bytes of the arguments received; tooLarge says they
	// went past MaxArgs and were dropped.
	size     int64
	tooLarge bool
}

// Add records one tool-call delta: its index (-1 if the provider sent
// none), and its id, function name and piece of the arguments, each ""
// when absent. A name is kept from the first delta that has one.
func (a *ToolCallAccumulator) Add(index int, id, name, args string) {
	c := a.find(index, id)
	if c.name == "" {
		c.name = name
	}
	c.size += int64(len(args))
	if a.MaxArgs > 0 && c.size > int64(a.MaxArgs) {
		if !c.tooLarge {
			c.tooLarge = true
			a.dropped += c.size - int64(len(args)) // what was kept so far
			c.args, c.buf = "", nil
		}
		a.dropped += int64(len(args))
		return
	}
	switch {
	case args == "":
	case c.buf != nil:
		c.buf = append(c.buf, args...)
	case c.args == "":
		c.args = args
	default:
		c.buf = make([]byte, 0, 2*(len(c.args)+len(args)))
		c.buf = append(append(c.buf, c.args...), args...)
		c.args = ""
	}
}

// find returns the call a delta belongs to, adding one if it starts a new
// call.
func (a *ToolCallAccumulator) find(index int, id string) *pendingCall {
	if index < 0 {
		if n := len(a.calls); n > 0 && (id == "" || id == a.calls[n-1].id) {
			return &a.calls[n-1]
		}
		return a.add(a.nextIndex(), id)
	}
	// The latest call with this index wins: it is the one a delta
	// without an id continues.
	for i := len(a.calls) - 1; i >= 0; i-- {
		c := &a.calls[i]
		if c.index != index {
			continue
		}
		if id != "" && c.id != "" && id != c.id {
			break // the index was reused for a new call
		}
		if c.id == "" {
			c.id = id
		}
		return c
	}
	return a.add(index, id)
}

func (a *ToolCallAccumulator) add(index int, id string) *pendingCall {
	a.calls = append(a.calls, pendingCall{index: index, id: id})
	return &a.calls[len(a.calls)-1]
}

func (a *ToolCallAccumulator) nextIndex() int {
	next := 0
	for _, c := range a.calls {
		next = max(next, c.index+1)
	}
	return next
}

// Dropped returns how many bytes of arguments were dropped for going past
// MaxArgs.
func (a *ToolCallAccumulator) Dropped() int64 { return a.dropped }

// Len returns the number of calls seen so far.
func (a *ToolCallAccumulator) Len() int { return len(a.calls) }

// Calls returns the assembled calls ordered by index; calls that share an
// index keep their arrival order. It returns nil if there were none. An ID
// is "" if the provider sent none; the caller must then assign one before
// the call is sent back to a model.
func (a *ToolCallAccumulator) Calls() []ToolCall {
	if len(a.calls) == 0 {
		return nil
	}
	byIndex := func(x, y pendingCall) int { return cmp.Compare(x.index, y.index) }
	pending := a.calls
	if !slices.IsSortedFunc(pending, byIndex) {
		pending = slices.Clone(pending)
		slices.SortStableFunc(pending, byIndex)
	}
	out := make([]ToolCall, len(pending))
	for i, c := range pending {
		args := c.args
		if c.buf != nil {
			args = string(c.buf)
		}
		out[i] = ToolCall{ID: c.id, Name: c.name, Arguments: args}
		if c.tooLarge {
			out[i].TooLarge = c.size
		}
	}
	return out
}

// Reset forgets all calls, keeping the memory for reuse.
func (a *ToolCallAccumulator) Reset() {
	clear(a.calls)
	a.calls = a.calls[:0]
	a.dropped = 0
}
