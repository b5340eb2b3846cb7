package main_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/mx-claw/mx-claw/internal/testutil/browser"
)

// serve starts `mx-claw serve --addr 127.0.0.1:0` on the env's home and
// returns its base URL and the login URL it printed. The server is
// stopped with SIGINT when the test ends, and must stop.
func (e *env) serve() (base, login string) {
	e.t.Helper()
	cmd := e.command(context.Background(), "serve", "--addr", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				e.t.Errorf("mx-claw serve ended with %v\n%s", err, errb.String())
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
			e.t.Errorf("mx-claw serve did not stop on SIGINT within 30 s\n%s", errb.String())
		}
	})
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, out)
	}()
	timeout := time.After(20 * time.Second)
	for login == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				e.t.Fatalf("mx-claw serve ended before printing its login URL\n%s", errb.String())
			}
			if rest, ok := strings.CutPrefix(l, "mx-claw serve: listening on "); ok {
				base = strings.TrimSpace(rest)
			}
			if rest, ok := strings.CutPrefix(l, "Open the panel: "); ok {
				login = strings.TrimSpace(rest)
			}
		case <-timeout:
			e.t.Fatalf("mx-claw serve printed no login URL in 20 s\n%s", errb.String())
		}
	}
	go func() {
		for range lines {
		}
	}()
	return base, login
}

// page drives the panel in one Chromium tab.
type page struct {
	t   *testing.T
	ctx context.Context
}

// do runs actions, failing the test on error.
func (p *page) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, actions...); err != nil {
		p.fail(what, err)
	}
}

// fail ends the test with a screenshot of the page as it was.
func (p *page) fail(what string, err error) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), 5*time.Second)
	defer cancel()
	if png, serr := chromedp.Run(ctx, chromedp.CaptureScreenshot()); serr == nil {
		dir := browser.ArtifactDir(p.t)
		path := dir + "/failure.png"
		if werr := os.WriteFile(path, png, 0o644); werr == nil {
			p.t.Logf("the page at the failure: %s", path)
		}
	}
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(-3000) : ''`))
	p.t.Fatalf("%s: %v\npage text (end):\n%s", what, err, text)
}

// js evaluates an expression and returns its value.
func js[T any](p *page, expr string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		p.fail("evaluate "+expr, err)
	}
	return v
}

// wait polls a JavaScript condition until it holds, for at most 30 s.
func (p *page) wait(what, cond string) {
	p.t.Helper()
	_, err := chromedp.Run(p.ctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(40*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		p.fail("waiting for "+what, err)
	}
}

// send types a message into the composer and presses Enter.
func (p *page) send(text string) {
	p.t.Helper()
	p.do("send "+text,
		chromedp.Focus(chromedp.CSS("textarea.input")),
		chromedp.SendKeys(chromedp.CSS("textarea.input"), text+"\r"))
}

// key dispatches one key press (down and up) to the focused element, as
// the keyboard would.
func key(name, code string, vk int64) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeRawKeyDown, input.DispatchKeyEventTypeKeyUp} {
			if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, input.DispatchKeyEventParams{
				Type: typ, Key: name, Code: code, WindowsVirtualKeyCode: vk, NativeVirtualKeyCode: vk,
			}); err != nil {
				return err
			}
		}
		return nil
	})
}

// wheel scrolls by dy pixels with the mouse wheel at (x, y), as a reader
// does.
func wheel(x, y, dy float64) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, input.DispatchMouseEvent, input.DispatchMouseEventParams{
			// DeltaX must be sent, and a zero one would be left out.
			Type: input.DispatchMouseEventTypeMouseWheel, X: x, Y: y, DeltaX: 0.01, DeltaY: dy,
		})
		return err
	})
}

// compose starts (or updates) an input method composition with text, as
// a Chinese or Japanese IME does before its text is committed.
func compose(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		n := int64(len([]rune(text)))
		_, err := cdp.Call(ctx, t, input.ImeSetComposition, input.ImeSetCompositionParams{Text: text, SelectionStart: n, SelectionEnd: n})
		return err
	})
}

// commit ends a composition by inserting its text.
func commit(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, input.InsertText, input.InsertTextParams{Text: text})
		return err
	})
}

// watchCSP counts the page's CSP violations in window.__cspViolations,
// from before any script of the page runs.
func watchCSP() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{
			Source: `window.__cspViolations = 0; document.addEventListener('securitypolicyviolation', (e) => { window.__cspViolations++; console.error('CSP', e.violatedDirective, e.blockedURI); });`,
		})
		return err
	})
}
