package agent

import (
	"math"

	"github.com/mx-claw/mx-claw/internal/catalog"
	"github.com/mx-claw/mx-claw/internal/compact"
)

// viewPercent estimates the share of the model's context window the next
// request will take with the compactions records: the tool schemas and
// the projected view, corrected by what the provider reported so far. A
// compaction event carries it, so that front ends show the context use
// the compaction left rather than the one before it.
func (t *turn) viewPercent(m catalog.Model, records []compact.Record) float64 {
	if m.ContextWindow <= 0 {
		return 0
	}
	ledger := ""
	if n := len(records); n > 0 {
		ledger = records[n-1].Ledger
	}
	est := t.estimator()
	n := t.specTokens(toolSpecs(t.tools))
	view := compact.Project(t.history, records, ledger)
	for i := range view {
		n += est(&view[i])
	}
	if r := t.core.calibrator(t.model.ID).Ratio(); r > 0 {
		n = int(float64(n) * r)
	}
	return math.Round(float64(n)*1000/float64(m.ContextWindow)) / 10
}
