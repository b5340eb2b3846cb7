package main_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/server/web"
	"github.com/mx-claw/mx-claw/internal/testutil/browser"
)

// greeting is the first answer: Markdown with the usual parts.
const greeting = "## Hello\n\nI can **read**, *edit* and run `commands` in this workspace.\n\n" +
	"| step | tool |\n|---|---|\n| look | read_file |\n| change | edit_file |\n\n" +
	"```sh\ngo test ./...\n```\n\n1. Tell me what to do.\n2. Approve what I ask.\n\nReady when you are."

// story is a long answer streamed slowly, so the test can watch it arrive
// and reload the page in the middle of it.
const story = "## A short story\n\nOnce upon a time a **panel** streamed an answer, piece by piece, " +
	"while a reader watched.\n\n- It kept the reader's place.\n- It showed every `tool` call.\n\n" +
	"```go\nfmt.Println(\"the end\")\n```\n\nAnd the stream ended exactly once."

// TestWebPanel drives the panel of a real `mx-claw serve` in a real
// headless Chromium against the fake model: log in with the printed URL,
// create a session, watch an answer stream (Markdown rendered as it
// comes), approve a command from its card, approve a subagent's command
// from the same dock while its progress shows under its task card, see
// the coloured diff of an edit, follow a turn that a terminal runs on the
// same session, switch the model and the permission mode, attach images
// (picked and pasted; refused by a text-only model, sent to one that
// reads them), queue a message and remove it, reload in the middle of a
// turn and find the same transcript without duplicates, cancel with Esc
// and get the message queued behind the cancelled turn back in the input
// box, see that Enter does not send while an input method composes, and
// set a key in the settings that is never shown again. Screenshots of the
// main screens at desktop width and at 390 px are saved in the test's
// artifact directory.
func TestWebPanel(t *testing.T) {
	t.Parallel()
	if browser.Path() == "" {
		t.Skip("chromium is not installed (make test-deps installs Debian's chromium); the panel needs a real browser")
	}
	e := newEnv(t)
	e.srv.RecordBodies(true)
	cfg := `{"version":1,"activeProvider":"fake","skills":{"proposals":false},"providers":{` +
		`"fake":{"name":"fake","kind":"custom","baseURL":"` + e.srv.URL() + `","model":"fake-model","models":["fake-model","other-model"],"apiKey":"","requiresApiKey":false,"configured":true},` +
		`"keyed":{"name":"keyed","kind":"custom","baseURL":"` + e.srv.URL() + `","model":"m","models":["m"],"apiKey":"","requiresApiKey":true,"configured":true}},` +
		`"modelSettings":{"fake/other-model":{"images":true}}}`
	e.writeHome("config.json", cfg)
	e.writeWS("a.txt", "hello\n")
	base, login := e.serve()
	t.Logf("screenshots in %s", browser.ArtifactDir(t))
	ctx := browser.Start(t, 4*time.Minute)
	p := &page{t: t, ctx: ctx}
	shot := func(name string) {
		t.Helper()
		browser.Screenshot(ctx, t, name)
	}
	mobile := func(on bool) {
		t.Helper()
		if on {
			p.do("390 px", browser.Size(390, 844, true))
		} else {
			p.do("desktop", browser.Size(1280, 860, false))
		}
	}

	// Without the login, the panel says how to sign in.
	p.do("open the panel unsigned", watchCSP(), chromedp.Navigate(base+"/"))
	p.wait("the sign-in notice", `!!document.querySelector('.signed-out-card') && document.body.textContent.includes('login URL')`)

	// Log in: the token becomes an HttpOnly cookie and leaves the URL.
	p.do("open the login URL", chromedp.Navigate(login))
	p.wait("the new-session form", `location.pathname === '/' && !!document.querySelector('form.new-session')`)
	if href := js[string](p, `location.href`); strings.Contains(href, "token") {
		t.Errorf("the token stayed in the address bar: %s", href)
	}
	if c := js[string](p, `document.cookie`); c != "" {
		t.Errorf("a script can read the cookie %q; it must be HttpOnly", c)
	}
	shot("home-desktop")

	// A new session in the workspace.
	p.do("fill the workspace",
		chromedp.SetValue(chromedp.CSS(`form.new-session input[name="workspace"]`), e.ws),
		chromedp.Click(chromedp.CSS(`form.new-session button[type="submit"]`)))
	p.wait("the session view, live", `/^#\/s\//.test(location.hash) && document.querySelector('.conn') && document.querySelector('.conn').dataset.state === 'live'`)
	sessionURL := js[string](p, `location.href`)
	sid := strings.TrimPrefix(js[string](p, `location.hash`), "#/s/")
	if got := e.show(sid).Session.Workspace; got != e.ws {
		t.Fatalf("session workspace %q, want %q", got, e.ws)
	}

	// A streamed answer, rendered as Markdown while it arrives.
	e.srv.Enqueue(llmtest.Reply{Reasoning: "The user greets me; answer with a plan.", Text: greeting, Pieces: 40, ChunkDelay: 40 * time.Millisecond})
	p.send("hello there")
	var partial []int
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		n := js[int](p, `(() => { const s = document.querySelector('.assistant.streaming .md'); return s ? s.textContent.length : (document.querySelector('.assistant:not(.streaming) .md') ? -1 : 0); })()`)
		if n == -1 {
			break
		}
		if n > 0 && (len(partial) == 0 || n > partial[len(partial)-1]) {
			partial = append(partial, n)
		}
		time.Sleep(25 * time.Millisecond)
	}
	if len(partial) < 3 {
		t.Errorf("saw the answer grow %d times (%v); it did not stream", len(partial), partial)
	}
	p.wait("the finished answer", `(() => { const m = document.querySelector('.assistant:not(.streaming) .md'); return m && m.querySelector('h2') && m.querySelector('strong') && m.querySelector('pre code.lang-sh') && m.querySelector('table') && m.textContent.includes('Ready when you are.'); })()`)
	if open := js[bool](p, `document.querySelector('.assistant details.reasoning').open`); open {
		t.Error("the reasoning is open; it should start collapsed")
	}
	if got := js[string](p, `document.querySelector('.assistant details.reasoning .reasoning-text').textContent`); got != "The user greets me; answer with a plan." {
		t.Errorf("reasoning %q", got)
	}
	p.wait("the meter", `/ctx [0-9.]+% · [0-9.k]+ tok/.test(document.querySelector('.meter').textContent)`)
	shot("chat-desktop")

	// A command that asks: answered from its card.
	e.srv.Enqueue(llmtest.Call("run_command", `{"command":"echo panel-ok > out.txt"}`), llmtest.Text("The command ran."))
	p.send("make out.txt")
	p.wait("the approval card", `!document.querySelector('.dock').hidden && !!document.querySelector('.dock .approval')`)
	if got := js[string](p, `document.querySelector('.dock .cmd').textContent`); got != "$ echo panel-ok > out.txt" {
		t.Errorf("the approval shows %q, not the command", got)
	}
	if title := js[string](p, `document.title`); !strings.HasPrefix(title, "(!) Approval needed") {
		t.Errorf("title %q does not say an approval is needed", title)
	}
	if got := js[[]string](p, `[...document.querySelectorAll('.dock .approval-buttons button')].map((b) => b.textContent)`); strings.Join(got, "|") != "Allow once|Allow for this session|Always allow here|Deny|Deny with message…" {
		t.Errorf("approval answers %q", got)
	}
	p.wait("the answers to be enabled", `[...document.querySelectorAll('.dock .approval-buttons button')].every((b) => !b.disabled)`)
	shot("approval-desktop")
	mobile(true)
	p.wait("the layout at 390 px", `document.documentElement.scrollWidth <= 390 && document.querySelector('#sidebar').getBoundingClientRect().right <= 0`)
	shot("approval-390")
	mobile(false)
	p.do("allow once", chromedp.Click(chromedp.CSS(`.dock button[data-answer="Allow once"]`)))
	p.wait("the command's result and the answer", `document.querySelector('.tool[data-tool="run_command"]').dataset.state === 'ok' && document.querySelector('.dock').hidden && [...document.querySelectorAll('.assistant .md')].some((m) => m.textContent === 'The command ran.')`)
	if data, err := os.ReadFile(filepath.Join(e.ws, "out.txt")); err != nil || string(data) != "panel-ok\n" {
		t.Errorf("out.txt after the approved command: %q, %v", data, err)
	}

	// A subagent whose command asks: its request comes up in this
	// session's dock, marked as the subagent's, its progress shows under
	// the task card, and the answer given here lets it go on.
	task, _ := json.Marshal(map[string]any{"description": "write sub.txt", "prompt": "Write sub.txt.", "subagent_type": "general"})
	e.srv.Enqueue(llmtest.Call("task", string(task)), llmtest.Call("run_command", `{"command":"echo from-sub > sub.txt"}`),
		llmtest.Text("sub.txt written."), llmtest.Text("The subagent wrote sub.txt."))
	p.send("delegate sub.txt")
	p.wait("the subagent's approval card", `!!document.querySelector('.dock .approval .badge.sub') && document.querySelector('.dock .cmd').textContent === '$ echo from-sub > sub.txt'`)
	p.wait("the subagent under the task card", `(() => { const s = document.querySelector('.tool[data-tool="task"] .subagent'); return s && s.querySelector('.sub-head').textContent.includes('general subagent') && [...s.querySelectorAll('.sub-call')].some((c) => c.dataset.state === 'waiting' && c.textContent.includes('echo from-sub')); })()`)
	if n := js[int](p, `document.querySelectorAll('.log > .tool[data-tool="run_command"]').length`); n != 1 {
		t.Errorf("%d run_command cards at the top level; the subagent's call belongs under its task card", n)
	}
	p.wait("the answers to be enabled", `[...document.querySelectorAll('.dock .approval-buttons button')].every((b) => !b.disabled)`)
	shot("subagent-approval-desktop")
	p.do("allow the subagent's command", chromedp.Click(chromedp.CSS(`.dock button[data-answer="Allow once"]`)))
	p.wait("the subagent's command, then the task's result", `document.querySelector('.tool[data-tool="task"]').dataset.state === 'ok' && document.querySelector('.dock').hidden && [...document.querySelectorAll('.tool[data-tool="task"] .sub-call')].some((c) => c.dataset.state === 'ok') && [...document.querySelectorAll('.assistant .md')].some((m) => m.textContent === 'The subagent wrote sub.txt.')`)
	if data, err := os.ReadFile(filepath.Join(e.ws, "sub.txt")); err != nil || string(data) != "from-sub\n" {
		t.Errorf("sub.txt after the subagent's approved command: %q, %v", data, err)
	}

	// Permission mode acceptEdits (from the header), then an edit: no
	// approval, and its diff in colour.
	js[bool](p, `(() => { const s = document.querySelector('select.mode'); s.value = 'acceptEdits'; s.dispatchEvent(new Event('change')); return true; })()`)
	waitFile(t, filepath.Join(e.home, "settings.json"), `"acceptEdits"`)
	e.srv.Enqueue(
		llmtest.Call("read_file", `{"path":"a.txt"}`),
		llmtest.Call("edit_file", `{"path":"a.txt","old_string":"hello","new_string":"hello web"}`),
		llmtest.Text("Edited."))
	p.send("edit a.txt")
	p.wait("the diff of the edit", `(() => { const d = document.querySelector('.tool[data-tool="edit_file"][data-state="ok"] .diff'); return d && [...d.querySelectorAll('.del')].some((l) => l.textContent === '-hello\n') && [...d.querySelectorAll('.add')].some((l) => l.textContent === '+hello web\n'); })()`)
	if colours := js[[]string](p, `['.add', '.del'].map((c) => getComputedStyle(document.querySelector('.tool[data-tool="edit_file"] .diff ' + c)).backgroundColor)`); colours[0] == colours[1] || colours[0] == "rgba(0, 0, 0, 0)" {
		t.Errorf("added and deleted lines are not coloured apart: %v", colours)
	}
	p.wait("the answer after the edit", `[...document.querySelectorAll('.assistant .md')].some((m) => m.textContent === 'Edited.')`)
	shot("diff-desktop")

	// A turn run from a terminal on the same session shows up live.
	e.srv.Enqueue(llmtest.Text("Terminal answer."))
	if r := e.run("", "run", "--session", sid, "from the terminal"); r.code != 0 {
		t.Fatalf("mx-claw run --session: exit %d\n%s", r.code, r.stderr)
	}
	p.wait("the terminal's turn in the panel", `[...document.querySelectorAll('.block.user')].some((u) => u.textContent === 'from the terminal') && [...document.querySelectorAll('.assistant .md')].some((m) => m.textContent === 'Terminal answer.')`)

	// Switch the model; the next request uses it.
	js[bool](p, `(() => { const s = document.querySelector('select.model'); s.value = 'fake/other-model'; s.dispatchEvent(new Event('change')); return true; })()`)
	waitFor := func(what string, f func() bool) {
		t.Helper()
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			if f() {
				return
			}
		}
		t.Fatalf("waiting for %s", what)
	}
	waitFor("the model switch", func() bool { return e.show(sid).Session.Model == "fake/other-model" })

	// Images: attached from the file picker and pasted; refused for a
	// model that does not read them (the message and the images stay),
	// sent to one that does (other-model, by modelSettings).
	shotPNG := filepath.Join(t.TempDir(), "shot.png")
	if err := os.WriteFile(shotPNG, pngFile(t, 30, 20, false), 0o644); err != nil {
		t.Fatal(err)
	}
	js[bool](p, `(() => { const s = document.querySelector('select.model'); s.value = 'fake/fake-model'; s.dispatchEvent(new Event('change')); return true; })()`)
	waitFor("the model switch back", func() bool { return e.show(sid).Session.Model == "fake/fake-model" })
	p.do("attach an image", chromedp.SetUploadFiles(chromedp.CSS(`input.image-picker`), []string{shotPNG}))
	p.wait("its thumbnail", `[...document.querySelectorAll('.attachments .attachment')].some((a) => a.textContent.includes('shot.png') && a.querySelector('img').naturalWidth === 30)`)
	js[bool](p, `(() => { const c = document.createElement('canvas'); c.width = 8; c.height = 6; const b = atob(c.toDataURL('image/png').split(',')[1]); const u = new Uint8Array(b.length); for (let i = 0; i < b.length; i++) u[i] = b.charCodeAt(i); const dt = new DataTransfer(); dt.items.add(new File([u], 'pasted.png', { type: 'image/png' })); document.querySelector('textarea.input').dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true })); return true; })()`)
	p.wait("two attachments", `document.querySelectorAll('.attachments .attachment').length === 2`)
	shot("images-desktop")
	p.send("what do these show?")
	p.wait("the refusal", `document.querySelector('.hint').textContent.includes('does not accept images') && document.querySelector('textarea.input').value.trim() === 'what do these show?' && document.querySelectorAll('.attachments .attachment').length === 2`)
	js[bool](p, `(() => { const s = document.querySelector('select.model'); s.value = 'fake/other-model'; s.dispatchEvent(new Event('change')); return true; })()`)
	waitFor("the model switch to other-model", func() bool { return e.show(sid).Session.Model == "fake/other-model" })
	e.srv.Enqueue(llmtest.Text("Two grey rectangles."))
	p.do("send again", chromedp.Click(chromedp.CSS(`button.send`)))
	p.wait("the message with its images, and the answer", `[...document.querySelectorAll('.block.user')].some((u) => u.textContent.includes('what do these show?') && u.textContent.includes('shot.png (30×20)') && u.textContent.includes('pasted.png (8×6)')) && [...document.querySelectorAll('.assistant .md')].some((m) => m.textContent === 'Two grey rectangles.') && document.querySelector('.attachments').hidden`)
	if reqs := e.srv.ChatRequests(); true {
		_, urls := imageParts(t, reqs[len(reqs)-1])
		if n := len(urls[len(urls)-1]); n != 2 {
			t.Errorf("the model got %d images with the message, want 2", n)
		}
	}

	// A slow answer: a message queued meanwhile is shown and removed, and
	// a reload in the middle of the turn shows the same transcript.
	e.srv.Enqueue(llmtest.Reply{Text: story, Pieces: 60, ChunkDelay: 70 * time.Millisecond})
	p.send("tell a long story")
	p.wait("the story to start", `(() => { const s = document.querySelector('.assistant.streaming .md'); return s && s.textContent.length > 10; })()`)
	// A reader who scrolls up keeps their place while the answer grows,
	// and is offered a way back down.
	if !js[bool](p, `(() => { const s = document.querySelector('.scroller'); return s.scrollHeight - s.scrollTop - s.clientHeight < 48; })()`) {
		t.Error("the view did not follow the answer to the bottom")
	}
	p.do("scroll up", wheel(600, 300, -400))
	p.wait("the view to move up", `(() => { const s = document.querySelector('.scroller'); return s.scrollHeight - s.scrollTop - s.clientHeight > 200; })()`)
	top := js[float64](p, `document.querySelector('.scroller').scrollTop`)
	p.wait("more of the answer", `document.querySelector('.assistant.streaming .md').textContent.length > 60`)
	if now := js[float64](p, `document.querySelector('.scroller').scrollTop`); now != top {
		t.Errorf("the view moved from %v to %v while the reader was reading", top, now)
	}
	p.wait("the jump button", `!document.querySelector('.jump').hidden`)
	p.do("jump to the latest", chromedp.Click(chromedp.CSS(`.jump`)))
	p.wait("the view at the bottom again", `(() => { const s = document.querySelector('.scroller'); return s.scrollHeight - s.scrollTop - s.clientHeight < 48 && document.querySelector('.jump').hidden; })()`)
	p.send("never send this")
	p.wait("the queued message, removable", `(() => { const q = document.querySelector('.queue .queued'); return q && q.textContent.includes('never send this') && !q.querySelector('.remove').disabled; })()`)
	shot("queued-desktop")
	p.do("remove the queued message", chromedp.Click(chromedp.CSS(`.queue .queued .remove`)))
	p.wait("the queue to empty", `document.querySelector('.queue').hidden`)
	if !js[bool](p, `!!document.querySelector('.assistant.streaming')`) {
		t.Fatal("the story finished before the reload; the reload must come mid-turn")
	}
	p.do("reload mid-turn", chromedp.Reload())
	p.wait("the session after the reload", `document.querySelector('.conn') && document.querySelector('.conn').dataset.state === 'live'`)
	p.wait("the story to finish", `document.querySelector('.status').dataset.status === 'idle' && [...document.querySelectorAll('.assistant:not(.streaming) .md')].some((m) => m.textContent.includes('exactly once') && m.closest('.block').previousElementSibling.textContent.includes('tell a long story'))`)
	shot("reloaded-desktop")
	afterReload := transcriptOf(p)
	checkNoDuplicates(t, afterReload)
	if got, want := countPrefix(afterReload, "user:"), 7; got != want {
		t.Errorf("%d user messages after the reload, want %d:\n%s", got, want, strings.Join(afterReload, "\n"))
	}
	// A fresh load of the finished session shows exactly the same.
	p.do("load again", chromedp.Navigate(base+"/#/s/"+sid))
	p.wait("the session", `document.querySelector('.conn') && document.querySelector('.conn').dataset.state === 'live' && document.querySelectorAll('.block').length > 0`)
	p.wait("the replay", `document.querySelectorAll('.block').length >= `+itoa(len(afterReload)))
	if fresh := transcriptOf(p); strings.Join(fresh, "\n") != strings.Join(afterReload, "\n") {
		t.Errorf("a fresh load shows another transcript than the reloaded page\nreloaded:\n%s\nfresh:\n%s", strings.Join(afterReload, "\n"), strings.Join(fresh, "\n"))
	}
	reqs := e.srv.ChatRequests()
	last := reqs[len(reqs)-1]
	if last.Chat.Model != "other-model" {
		t.Errorf("the story was asked of %q, want other-model", last.Chat.Model)
	}
	for _, r := range reqs {
		if strings.Contains(string(r.Body), "never send this") {
			t.Errorf("the removed queued message reached the model")
		}
	}

	// Esc cancels a turn; a message queued behind it comes back into the
	// input box, and leaves the queue.
	e.srv.Enqueue(llmtest.Reply{Hang: true})
	p.send("wait forever")
	p.wait("the turn to run", `document.querySelector('.status').dataset.status === 'running'`)
	p.send("bring me back")
	p.wait("the queued message, removable at once", `(() => { const q = document.querySelector('.queue .queued'); return q && q.textContent.includes('bring me back') && !q.querySelector('.remove').disabled; })()`)
	p.do("press Esc", chromedp.Focus(chromedp.CSS("textarea.input")), chromedp.SendKeys(chromedp.CSS("textarea.input"), kb.Escape))
	p.wait("the cancellation", `[...document.querySelectorAll('.notice')].some((n) => n.textContent.startsWith('Cancelled')) && document.querySelector('.status').dataset.status !== 'running'`)
	p.wait("the queued message back in the input box", `document.querySelector('textarea.input').value === 'bring me back' && document.querySelector('.queue').hidden`)
	shot("returned-desktop")
	js[bool](p, `(() => { const t = document.querySelector('textarea.input'); t.value = ''; return true; })()`)

	// Enter while an input method composes does not send; Enter after
	// the text is committed does.
	users := js[int](p, `document.querySelectorAll('.block.user').length`)
	p.do("compose with an IME", chromedp.Focus(chromedp.CSS("textarea.input")), compose("にほんご"), key("Enter", "Enter", 13))
	time.Sleep(300 * time.Millisecond)
	if n := js[int](p, `document.querySelectorAll('.block.user').length`); n != users {
		t.Fatal("Enter sent the message while the input method was composing")
	}
	p.do("commit", commit("日本語"))
	// A person presses Enter a moment after the composition ends; an
	// Enter in the same moment is the one that ended it (Safari's order).
	time.Sleep(150 * time.Millisecond)
	p.do("send", key("Enter", "Enter", 13))
	p.wait("the committed message", `[...document.querySelectorAll('.block.user')].some((u) => u.textContent === '日本語')`)
	p.wait("its answer", `document.querySelector('.status').dataset.status === 'idle'`)

	// Shift+Enter makes a new line instead of sending.
	p.do("Shift+Enter", chromedp.Focus(chromedp.CSS("textarea.input")), chromedp.SendKeys(chromedp.CSS("textarea.input"), "line one"),
		chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierShift)), chromedp.SendKeys(chromedp.CSS("textarea.input"), "line two"))
	if v := js[string](p, `document.querySelector('textarea.input').value`); v != "line one\nline two" {
		t.Errorf("after Shift+Enter the box holds %q", v)
	}
	js[bool](p, `(() => { const t = document.querySelector('textarea.input'); t.value = ''; return true; })()`)

	// Narrow screen: the chat and the session list.
	mobile(true)
	p.do("back to the session", chromedp.Navigate(sessionURL))
	p.wait("the session at 390 px", `document.querySelector('.conn') && document.querySelector('.conn').dataset.state === 'live' && document.documentElement.scrollWidth <= 390`)
	shot("chat-390")
	// The session list slides away when the screen narrows; click once
	// it is gone, as a person would.
	p.wait("the session list to slide away", `document.querySelector('#sidebar').getBoundingClientRect().right <= 0`)
	p.do("open the session list", chromedp.Click(chromedp.CSS(`.chat-head .menu`)))
	p.wait("the session list", `document.body.classList.contains('sidebar-open') && document.querySelectorAll('.session-item').length >= 1 && document.querySelector('#sidebar').getBoundingClientRect().left === 0`)
	shot("sessions-390")
	if !js[bool](p, `!!document.querySelector('.session-item.active[aria-current="page"]')`) {
		t.Error("the open session is not marked in the list")
	}
	p.do("settings", chromedp.Click(chromedp.CSS(`.settings-link`)))
	p.wait("the settings at 390 px, the list closed", `!!document.querySelector('.provider[data-provider="keyed"] .key-form') && document.querySelector('#sidebar').getBoundingClientRect().right <= 0 && document.documentElement.scrollWidth <= 390`)
	shot("settings-390")
	mobile(false)

	// Settings: a key is set, and never shown or sent back.
	const secretKey = "sk-test-never-shown-0123456789"
	shot("settings-desktop")
	p.do("set the key",
		chromedp.SendKeys(chromedp.CSS(`.provider[data-provider="keyed"] input[type="password"]`), secretKey),
		chromedp.Click(chromedp.CSS(`.provider[data-provider="keyed"] .key-form button`)))
	p.wait("the key to be saved", `(() => { const b = document.querySelector('.provider[data-provider="keyed"]'); return b && /saved|not saved/.test(b.querySelector('.form-status').textContent); })()`)
	if msg := js[string](p, `document.querySelector('.provider[data-provider="keyed"] .form-status').textContent`); !strings.Contains(msg, "saved. It is not shown again") {
		t.Fatalf("setting the key: %s", msg)
	}
	if state := js[string](p, `document.querySelector('.provider[data-provider="keyed"] .key-state').textContent`); !strings.HasPrefix(state, "key configured") {
		t.Errorf("after setting the key the provider says %q", state)
	}
	if html := js[string](p, `document.documentElement.outerHTML`); strings.Contains(html, secretKey) {
		t.Error("the key is in the page after it was saved")
	}
	if body := js[string](p, `fetch('/api/settings').then((r) => r.text())`); strings.Contains(body, secretKey) || !strings.Contains(body, `"keyConfigured":true`) {
		t.Errorf("GET /api/settings after setting a key: %s", body)
	}

	// The dark scheme, for a look.
	p.do("dark", browser.Dark(true), chromedp.Navigate(sessionURL))
	p.wait("the session, dark", `document.querySelector('.conn') && document.querySelector('.conn').dataset.state === 'live' && document.querySelectorAll('.block').length > 10`)
	shot("chat-dark-desktop")
	p.do("light", browser.Dark(false))

	// The session list searches titles and workspaces.
	p.do("search for nothing", chromedp.SendKeys(chromedp.CSS(`.sidebar .search`), "no-such-session"))
	p.wait("no match", `document.querySelectorAll('.session-item').length === 0 && document.querySelector('.session-list').textContent.includes('No session matches')`)
	js[bool](p, `(() => { document.querySelector('.sidebar .search').value = ''; return true; })()`)
	p.do("search for the workspace", chromedp.SendKeys(chromedp.CSS(`.sidebar .search`), filepath.Base(e.ws)))
	p.wait("the session", `document.querySelectorAll('.session-item').length === 1`)

	// The page must not have logged errors of its own (CSP violations
	// show up as securitypolicyviolation events).
	if n := js[int](p, `window.__cspViolations || 0`); n != 0 {
		t.Errorf("%d CSP violations", n)
	}
}

// TestWebPanelServedWithCSP checks, without a browser, what a real
// `mx-claw serve` sends for the panel: the CSP on every file, no inline
// script in the HTML, JavaScript modules with a JavaScript type, and the
// panel's files reachable without the token while the API is not.
func TestWebPanelServedWithCSP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base, _ := e.serve()
	get := func(path string) (*http.Response, string) {
		t.Helper()
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res, string(body)
	}
	res, html := get("/")
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if got := res.Header.Get("Content-Security-Policy"); got != web.CSP {
		t.Errorf("GET / CSP %q, want %q", got, web.CSP)
	}
	for _, m := range regexp.MustCompile(`(?is)<script\b([^>]*)>(.*?)</script>`).FindAllStringSubmatch(html, -1) {
		if strings.TrimSpace(m[2]) != "" || !strings.Contains(m[1], `src="/`) {
			t.Errorf("GET /: inline or foreign script %q", m[0])
		}
	}
	if regexp.MustCompile(`(?i)\son[a-z]+=|\sstyle=|<style`).MatchString(html) {
		t.Error("GET /: inline handler or style")
	}
	for _, f := range []string{"/app.js", "/markdown.js", "/style.css"} {
		res, _ := get(f)
		if res.StatusCode != 200 || res.Header.Get("Content-Security-Policy") != web.CSP {
			t.Errorf("GET %s: %d, CSP %q", f, res.StatusCode, res.Header.Get("Content-Security-Policy"))
		}
		if strings.HasSuffix(f, ".js") && !strings.HasPrefix(res.Header.Get("Content-Type"), "text/javascript") {
			t.Errorf("GET %s: Content-Type %q; a module needs a JavaScript type", f, res.Header.Get("Content-Type"))
		}
		if res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no nosniff", f)
		}
	}
	if res, _ := get("/api/sessions"); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /api/sessions without a token: %d, want 401", res.StatusCode)
	}
}

// transcriptOf reads the transcript as lines "kind: text", one per
// block, for comparing two loads of a session.
func transcriptOf(p *page) []string {
	p.t.Helper()
	return js[[]string](p, `[...document.querySelectorAll('.log > .block')].map((b) => {
		const kind = b.classList.contains('user') ? 'user' : b.classList.contains('assistant') ? 'assistant' : b.classList.contains('tool') ? 'tool ' + b.dataset.call + ' ' + b.dataset.state : 'other';
		const text = (b.classList.contains('assistant') ? (b.querySelector('.md') || b).textContent : b.textContent).replace(/\s+/g, ' ').trim();
		return kind + ': ' + text.slice(0, 200);
	})`)
}

// checkNoDuplicates fails if a message or a tool card appears twice.
func checkNoDuplicates(t *testing.T, lines []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, l := range lines {
		if strings.HasPrefix(l, "other:") {
			continue
		}
		if seen[l] {
			t.Errorf("shown twice: %s\n%s", l, strings.Join(lines, "\n"))
		}
		seen[l] = true
	}
}

func countPrefix(lines []string, prefix string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// waitFile waits until the file holds want.
func waitFile(t *testing.T, path, want string) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if data, err := os.ReadFile(path); err == nil && strings.Contains(string(data), want) {
			return
		}
	}
	data, _ := os.ReadFile(path)
	t.Fatalf("%s never held %s; it holds %s", path, want, data)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
