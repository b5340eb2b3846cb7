package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/mx-claw/mx-claw/internal/modelcmd"
)

// askAsync runs ask on a goroutine, delivers its prompt to the Model and
// returns a channel with the result.
func askAsync[T any](h *harness, ask func(modelcmd.Prompter) (T, error)) chan struct {
	v   T
	err error
} {
	h.t.Helper()
	res := make(chan struct {
		v   T
		err error
	}, 1)
	// A channel of its own: the harness's listeners left running read
	// the Model's.
	ch := make(chan tea.Msg, 1)
	p := uiPrompter{events: ch}
	go func() {
		v, err := ask(p)
		res <- struct {
			v   T
			err error
		}{v, err}
	}()
	select {
	case msg := <-ch:
		h.send(msg)
	case <-time.After(2 * time.Second):
		h.t.Fatal("the prompter sent no prompt")
	}
	return res
}

func keyPress(s string) tea.KeyPressMsg {
	switch s {
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

func (h *harness) typeKeys(keys ...string) {
	for _, k := range keys {
		h.send(keyPress(k))
	}
}

func wait[T any](t *testing.T, res chan struct {
	v   T
	err error
}) (T, error) {
	t.Helper()
	select {
	case r := <-res:
		return r.v, r.err
	case <-time.After(2 * time.Second):
		t.Fatal("the prompt was not answered")
	}
	var zero T
	return zero, nil
}

func TestPrompterSelect(t *testing.T) {
	h := newHarness(t, 80, 24)
	ctx := context.Background()
	opts := []modelcmd.Option{{Value: "a", Label: "model-a"}, {Value: "b", Label: "model-b · current", Current: true}, {Value: "c", Label: "model-c"}}
	res := askAsync(h, func(p modelcmd.Prompter) (string, error) { return p.Select(ctx, "Select a fake model", opts) })
	view := ansi.Strip(h.m.View().Content)
	if !strings.Contains(view, "Select a fake model") || !strings.Contains(view, "› model-b · current") || !strings.Contains(view, "  model-a") {
		t.Errorf("view:\n%s", view)
	}
	h.typeKeys("down", "down", "up", "down")
	h.typeKeys("enter")
	if v, err := wait(t, res); err != nil || v != "c" {
		t.Errorf("Select = %q, %v; want c", v, err)
	}
	if h.m.prompt != nil || strings.Contains(ansi.Strip(h.m.View().Content), "model-a") {
		t.Error("the prompt stays after the answer")
	}

	res = askAsync(h, func(p modelcmd.Prompter) (string, error) { return p.Select(ctx, "Select", opts) })
	h.typeKeys("esc")
	if _, err := wait(t, res); !errors.Is(err, modelcmd.ErrCancelled) {
		t.Errorf("Esc: err = %v, want ErrCancelled", err)
	}
}

func TestPrompterInputSecretConfirm(t *testing.T) {
	h := newHarness(t, 80, 24)
	ctx := context.Background()
	h.m.input.SetValue("draft kept")

	res := askAsync(h, func(p modelcmd.Prompter) (string, error) { return p.Input(ctx, "Base URL", "https://def") })
	if view := ansi.Strip(h.m.View().Content); !strings.Contains(view, "Base URL") || !strings.Contains(view, "https://def") {
		t.Errorf("view:\n%s", view)
	}
	h.typeKeys("h", "i", "x", "backspace")
	h.send(tea.PasteMsg{Content: "!\n"})
	h.typeKeys("enter")
	if v, err := wait(t, res); err != nil || v != "hi!" {
		t.Errorf("Input = %q, %v", v, err)
	}
	res = askAsync(h, func(p modelcmd.Prompter) (string, error) { return p.Input(ctx, "Base URL", "https://def") })
	h.typeKeys("enter")
	if v, err := wait(t, res); err != nil || v != "https://def" {
		t.Errorf("empty Input = %q, %v; want the default", v, err)
	}

	res = askAsync(h, func(p modelcmd.Prompter) (string, error) { return p.Secret(ctx, "API key") })
	h.typeKeys("s", "k", "-", "9", "Z")
	view := ansi.Strip(h.m.View().Content)
	if !strings.Contains(view, "API key") || strings.Contains(view, "sk-9Z") || strings.Contains(view, "9Z") {
		t.Errorf("the secret shows:\n%s", view)
	}
	h.typeKeys("enter")
	if v, err := wait(t, res); err != nil || v != "sk-9Z" {
		t.Errorf("Secret = %q, %v", v, err)
	}
	for _, e := range h.m.hist.entries {
		if strings.Contains(e, "sk-9Z") {
			t.Error("the secret is in the input history")
		}
	}
	if strings.Contains(strings.Join(h.printed, "\n"), "sk-9Z") {
		t.Error("the secret was printed")
	}

	resB := askAsync(h, func(p modelcmd.Prompter) (bool, error) { return p.Confirm(ctx, "Save it?", true) })
	h.typeKeys("n")
	if v, err := wait(t, resB); err != nil || v {
		t.Errorf("Confirm n = %v, %v", v, err)
	}
	resB = askAsync(h, func(p modelcmd.Prompter) (bool, error) { return p.Confirm(ctx, "Save it?", true) })
	h.typeKeys("enter")
	if v, err := wait(t, resB); err != nil || !v {
		t.Errorf("Confirm Enter = %v, %v; want the default", v, err)
	}
	if v := h.m.input.Value(); v != "draft kept" {
		t.Errorf("the typed draft became %q", v)
	}
}
