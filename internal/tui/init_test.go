package tui

import (
	"strings"
	"testing"
	"time"
)

type initFake struct{ *fakeBackend }

func (initFake) InitPrompt(extra string) string { return "SURVEY AND WRITE AGENTS.md; " + extra }

func TestInitSendsThePrompt(t *testing.T) {
	h := newHarness(t, 100, 24)
	h.m.backend = initFake{h.b}
	h.typeLine("/init mention the Makefile")
	deadline := time.Now().Add(2 * time.Second)
	for {
		h.b.mu.Lock()
		runs := append([]string(nil), h.b.runs...)
		h.b.mu.Unlock()
		if len(runs) == 1 {
			if runs[0] != "SURVEY AND WRITE AGENTS.md; mention the Makefile" {
				t.Errorf("turn input = %q", runs[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no turn started: %q", runs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !h.m.busy || !strings.Contains(h.screen(), "/init mention the Makefile") {
		t.Errorf("busy %v, screen:\n%s", h.m.busy, h.screen())
	}
}
