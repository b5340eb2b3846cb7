package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/mx-claw/mx-claw/internal/modelcmd"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// Options configure a Model.
type Options struct {
	// Backend is mx-claw; required.
	Backend Backend
	// Session is the session the UI opens on.
	Session protocol.Session
	// History is the session's stored events, shown first (for a resumed
	// session) as they were shown live.
	History []protocol.Event
	// HistoryFile keeps the input history of the workspace; none if "".
	HistoryFile string
	// Width and Height are the terminal's size until the program reports
	// it; 80×24 if zero.
	Width, Height int
	// NoColor renders without colours (NO_COLOR).
	NoColor bool
	// Now is the clock; time.Now if nil.
	Now func() time.Time
}

// Messages the Model sends itself.
type (
	// eventMsg carries one event of the running turn.
	eventMsg struct{ ev protocol.Event }
	// turnDoneMsg says Backend.Run returned.
	turnDoneMsg struct{ err error }
	// compactDoneMsg says Backend.Compact returned.
	compactDoneMsg struct {
		done bool
		err  error
	}
	// printedMsg says the last print reached the scrollback.
	printedMsg struct{}
	// noticeMsg prints a line (the result of a background command).
	noticeMsg struct {
		text string
		err  error
	}
	// sessionMsg switches the UI to a session (new or resumed).
	sessionMsg struct {
		sess    protocol.Session
		history []protocol.Event
		err     error
	}
	// sessionsMsg lists sessions for the picker.
	sessionsMsg struct {
		list []protocol.Session
		err  error
	}
	// modelMsg is the result of a /model command.
	modelMsg struct {
		out, model string
		err        error
	}
)

// toolCard is a tool call in progress.
type toolCard struct {
	id, name, summary string
	start             time.Time
	output            []string // last lines of tool.output
}

// Model is the Bubble Tea model of the REPL. Use it through Run, or drive
// Update and View directly in tests. Its methods run on the program's
// goroutine; the turn runs on one of its own and reaches the Model through
// the events channel.
type Model struct {
	ctx     context.Context
	backend Backend
	opts    Options
	now     func() time.Time
	th      theme
	r       renderer

	width, height int
	input         textarea.Model
	spin          spinner.Model
	hist          *inputHistory
	turnInput     string // the input of the running turn, as typed

	turnImages []string   // the images sent with the running turn (images.go)
	paste      pasteState // images pasted into the input (paste.go)

	sess  protocol.Session
	model string
	mode  string
	// sandbox names the command sandbox in force, for the status line.
	sandbox string

	// The turn.
	events     chan tea.Msg
	wg         *sync.WaitGroup
	busy       bool
	turnStart  time.Time
	firstToken time.Duration
	gotToken   bool
	// askedAt is when approvals began to be shown; approvalTime sums the
	// time they were shown in this turn.
	askedAt      time.Time
	approvalTime time.Duration
	turnsSeen    int
	stream       strings.Builder
	reasoning    strings.Builder
	// printedTo is how much of stream has been printed rendered, in
	// partsPrinted parts; answerStarted says its reasoning was printed
	// before the first (see stream.go).
	printedTo     int
	partsPrinted  int
	answerStarted bool
	tools         []*toolCard
	subs          subagents // progress of the subagents of task cards (subagent.go)
	approvals     []protocol.Event
	// preview is the rendered detail of the approval shown, for
	// previewKey (its request and width); expanded is the request whose
	// detail was printed in full.
	preview    []string
	previewKey string
	expanded   string
	feedback   bool // typing feedback for a rejection
	queued     []queuedItem
	turnFailed bool // the last turn did not end well
	// turnPrompt is what the user typed for the running turn ("" for a
	// continued or queued one); answered says the model answered in it;
	// failCode is the code of its turn.failed.
	turnPrompt string
	answered   bool
	failCode   protocol.ErrorCode
	// failedPrompt is the prompt of the last turn if it ended before the
	// model answered it: sending it again retries instead of storing it
	// twice. offer is "continue" after a turn stopped at its step budget.
	failedPrompt string
	offer        string
	todos        []protocol.Todo
	// retry is the error of a request being sent again at retryAt,
	// attempt retryAttempt+1.
	retry        string
	retryAt      time.Time
	retryAttempt int
	compacting   bool // the turn is a /compact
	compacted    int  // messages the compaction summarised, -1 if unknown

	// lastReasoning is the reasoning of the last answer, for /reasoning.
	lastReasoning string

	// Usage.
	turnUsage, total protocol.Usage
	ctxPercent       float64
	cost             float64
	costKnown        bool

	// prompt is the question a /model handler is asking, if any.
	prompt *activePrompt

	// Sessions picker.
	picking bool
	picks   []protocol.Session
	pick    int

	// Printing: lines not yet handed to the program, and whether a print
	// is on its way (prints go one at a time to keep their order).
	out      []string
	printing bool
	// views are the heights of the live areas rendered lately, for
	// telling how tall the one on the screen may be (see takePrintable).
	views   []viewHeight
	onPrint func(string) // tests

	ctrlCAt  time.Time
	quitting bool
	// clearing is the step of a /clear under way.
	clearing clearStep
	// menuSel is the command chosen in the slash menu; menuClosed is the
	// input the menu was closed on with Esc.
	menuSel    int
	menuClosed string
}

// New returns a Model for ctx (which ends the turns when cancelled).
func New(ctx context.Context, opts Options) *Model {
	if opts.Width <= 0 {
		opts.Width = 80
	}
	if opts.Height <= 0 {
		opts.Height = 24
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	th := newTheme(opts.NoColor)
	m := &Model{
		ctx: ctx, backend: opts.Backend, opts: opts, now: now, th: th,
		r:     renderer{th: th, width: opts.Width},
		width: opts.Width, height: opts.Height,
		events: make(chan tea.Msg, 1024),
		wg:     &sync.WaitGroup{},
		hist:   loadHistory(opts.HistoryFile),
		spin:   spinner.New(spinner.WithSpinner(spinner.MiniDot)),
	}
	m.input = newInput(th, opts.Width)
	m.mode = opts.Backend.Mode()
	if sb, ok := opts.Backend.(sandboxReporter); ok {
		m.sandbox = sb.Sandbox()
	}
	m.setSession(opts.Session, opts.History)
	return m
}

// newInput returns the focused input box.
func newInput(th theme, width int) textarea.Model {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Prompt = "│ "
	ta.Placeholder = "Ask mx-claw…  (/help for commands)"
	ta.CharLimit = 0
	ta.MaxHeight = 0
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxContentHeight = 0
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("shift+enter", "alt+enter", "ctrl+j"))
	ta.SetWidth(width)
	ta.SetHeight(1)
	ta.Focus()
	_ = th
	return ta
}

// Wait blocks until the turn goroutines have returned, at most d.
func (m *Model) Wait(d time.Duration) {
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// setSession shows a session: its history is printed and the counters
// start from its stored usage.
func (m *Model) setSession(s protocol.Session, history []protocol.Event) {
	m.sess, m.model = s, s.Model
	m.total = s.Usage
	m.turnUsage = protocol.Usage{}
	m.cost, m.costKnown, m.ctxPercent = 0, false, 0
	m.todos, m.queued = nil, nil
	if len(history) > 0 {
		m.print(m.th.dim.Render(fmt.Sprintf("Resumed session %s (%d messages).", s.ID, s.MessageCount)))
		m.replay(history)
	} else if s.ID != "" {
		m.print(m.th.dim.Render(oneLine(fmt.Sprintf("mx-claw · session %s · %s · /help for commands", s.ID, clean(m.backend.Workspace())), m.width)))
	}
}

// Init starts the spinner and the event listener.
//
// The first print waits until the live area has been drawn: printing above
// a live area the renderer has not put on the screen yet can leave that
// first frame behind, above the printed lines.
func (m *Model) Init() tea.Cmd {
	m.printing = true
	return tea.Batch(m.listen(), m.input.Focus(), tea.Tick(flushWindow, func(time.Time) tea.Msg { return printedMsg{} }))
}

// listen waits for the next message of a turn.
func (m *Model) listen() tea.Cmd {
	ch, ctx := m.events, m.ctx
	return func() tea.Msg {
		select {
		case msg := <-ch:
			return msg
		case <-ctx.Done():
			return nil
		}
	}
}

// print queues finished lines for the scrollback.
func (m *Model) print(lines ...string) {
	for _, l := range lines {
		if l != "" {
			m.out = append(m.out, l)
		}
	}
}

// flush hands the queued lines to the program if no print is on its way
// (and no /clear).
func (m *Model) flush() tea.Cmd {
	if len(m.out) == 0 {
		return nil
	}
	if m.onPrint != nil {
		text := strings.Join(m.out, "\n")
		m.out = nil
		m.onPrint(text)
		return nil
	}
	if m.printing || m.clearing != clearNone {
		return nil
	}
	text := m.takePrintable()
	m.printing = true
	return tea.Sequence(tea.Println(text), func() tea.Msg { return printedMsg{} })
}

// viewHeight is the height of a live area and when it was rendered.
type viewHeight struct {
	at   time.Time
	rows int
}

// flushWindow is longer than the renderer takes to put the latest live
// area on the screen (it redraws at 60 frames a second).
const flushWindow = 150 * time.Millisecond

// noteView records the height of a live area just rendered.
func (m *Model) noteView(rows int) {
	m.pruneViews()
	m.views = append(m.views, viewHeight{time.Now(), rows})
}

// pruneViews keeps the views of the last flushWindow and the last one
// before it: any of them may be the one on the screen.
func (m *Model) pruneViews() {
	now, i := time.Now(), 0
	for i < len(m.views)-1 && now.Sub(m.views[i+1].at) > flushWindow {
		i++
	}
	m.views = m.views[i:]
}

// liveRows is how tall the live area on the screen may be.
func (m *Model) liveRows() int {
	m.pruneViews()
	rows := 0
	for _, v := range m.views {
		rows = max(rows, v.rows)
	}
	return rows
}

// takePrintable takes from the queued lines as many as fit above the live
// area in one print.
//
// Bubble Tea's inline renderer prints above the live area by scrolling the
// screen up by the printed rows and then moving the cursor up to the top
// of the live area to insert them there. The cursor cannot move above the
// top of the screen, so when the printed rows and the live area together
// are taller than the screen the live area has been scrolled into the
// scrollback, where it can no longer be erased: a stale copy of it (the
// input box and the status line) stays above the printed text, and rows
// of the text are lost. Printing at most height − live-area rows at a time
// avoids that.
func (m *Model) takePrintable() string {
	lines := strings.Split(strings.Join(m.out, "\n"), "\n")
	room := max(m.height-m.liveRows(), 1)
	rows, n := 0, 0
	for n < len(lines) {
		r := 1
		if w := ansi.StringWidth(lines[n]); m.width > 0 && w > m.width {
			r += w / m.width
		}
		if n > 0 && rows+r > room {
			break
		}
		rows += r
		n++
	}
	if n == len(lines) {
		m.out = nil
	} else {
		m.out = []string{strings.Join(lines[n:], "\n")}
	}
	return strings.Join(lines[:n], "\n")
}

// Update handles a message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmds := m.update(msg)
	cmds = append(cmds, m.flush())
	if m.quitting {
		cmds = append(cmds, tea.Quit)
	}
	return m, tea.Batch(cmds...)
}

func (m *Model) update(msg tea.Msg) []tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.r.width = msg.Width
		m.input.SetWidth(msg.Width)
		return nil
	case printedMsg:
		m.printing = false
		return nil
	case clearMsg:
		return m.clearNext()
	case spinner.TickMsg:
		if !m.busy {
			return nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return []tea.Cmd{cmd}
	case eventMsg:
		m.handleEvent(msg.ev)
		return []tea.Cmd{m.listen()}
	case turnDoneMsg:
		return append(m.turnDone(msg.err), m.listen())
	case compactDoneMsg:
		return append(m.compactDone(msg), m.listen())
	case queuedMsg:
		return m.queuedDone(msg)
	case dequeuedMsg:
		m.dequeued(msg)
		return nil
	case modeMsg:
		m.modeSet(msg)
		return nil
	case noticeMsg:
		if msg.err != nil {
			m.print(m.th.fail.Render(clean(msg.err.Error())))
		} else {
			m.print(msg.text)
		}
		return nil
	case sessionMsg:
		if msg.err != nil {
			m.print(m.th.fail.Render(clean(msg.err.Error())))
			return nil
		}
		m.setSession(msg.sess, msg.history)
		return nil
	case sessionsMsg:
		return m.showPicker(msg)
	case modelMsg:
		if msg.out != "" {
			m.print(clean(strings.TrimRight(msg.out, "\n")))
		}
		switch {
		case errors.Is(msg.err, modelcmd.ErrCancelled):
			m.print(m.th.warn.Render("Cancelled."))
		case msg.err != nil:
			m.print(m.th.fail.Render(clean(msg.err.Error())))
		}
		if msg.model != "" {
			m.model = msg.model
		}
		return nil
	case promptMsg:
		m.showPrompt(msg)
		return []tea.Cmd{m.listen()}
	case tea.PasteMsg:
		if m.prompt != nil {
			m.prompt.typeText(msg.Content)
			return nil
		}
		if cmd, took := m.pasteInput(msg.Content); took {
			return []tea.Cmd{cmd}
		}
	case clipboardMsg:
		return m.clipboardDone(msg)
	case tea.KeyPressMsg:
		return m.handleKey(msg)
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return []tea.Cmd{cmd}
}

// startTurn sends input as a turn (input "" sends only what is queued).
func (m *Model) startTurn(input string) []tea.Cmd {
	b, sid := m.backend, m.sess.ID
	imgs := m.turnImages
	m.turnImages = nil
	return m.startRun(func(ctx context.Context, sink func(protocol.Event)) error {
		return runTurn(ctx, b, sid, input, imgs, sink)
	})
}

// startRun runs a turn with run, which reports its events to sink.
func (m *Model) startRun(run func(ctx context.Context, sink func(protocol.Event)) error) []tea.Cmd {
	m.busy = true
	m.turnStart = m.now()
	m.gotToken, m.firstToken, m.turnsSeen = false, 0, 0
	m.askedAt, m.approvalTime = time.Time{}, 0
	m.turnUsage = protocol.Usage{}
	m.retry = ""
	m.answered, m.failCode, m.offer = false, "", ""
	ctx, ch := m.ctx, m.events
	sink := func(e protocol.Event) {
		select {
		case ch <- eventMsg{e}:
		case <-ctx.Done():
		}
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		err := run(ctx, sink)
		select {
		case ch <- turnDoneMsg{err}:
		case <-ctx.Done():
		}
	}()
	return []tea.Cmd{m.spin.Tick}
}

// startCompact runs /compact as a turn: the live area shows it going on
// and messages typed meanwhile are queued.
func (m *Model) startCompact(instructions string) []tea.Cmd {
	m.busy, m.compacting, m.compacted = true, true, 0
	m.turnStart = m.now()
	m.retry = ""
	ctx, b, sid, ch := m.ctx, m.backend, m.sess.ID, m.events
	sink := func(e protocol.Event) {
		select {
		case ch <- eventMsg{e}:
		case <-ctx.Done():
		}
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		done, err := b.Compact(ctx, sid, instructions, sink)
		select {
		case ch <- compactDoneMsg{done: done, err: err}:
		case <-ctx.Done():
		}
	}()
	return []tea.Cmd{m.spin.Tick}
}

// compactDone prints how /compact ended, then sends what was queued
// meanwhile.
func (m *Model) compactDone(msg compactDoneMsg) []tea.Cmd {
	m.busy, m.compacting, m.retry = false, false, ""
	switch {
	case errors.Is(msg.err, context.Canceled):
		m.print(m.th.warn.Render("Cancelled."))
	case msg.err != nil:
		m.print(m.th.fail.Render("Request failed: " + clean(msg.err.Error())))
	case !msg.done:
		m.print(m.th.dim.Render("Nothing to compact yet."))
	case m.compacted > 0:
		m.print(m.th.ok.Render("✓ ") + fmt.Sprintf("Compacted %d messages; the model now sees a summary.", m.compacted))
	default:
		m.print(m.th.ok.Render("✓ ") + "Compacted the older messages; the model now sees a summary.")
	}
	m.turnFailed = msg.err != nil
	if len(m.queued) > 0 && msg.err == nil {
		m.printQueuedAsSent()
		return m.startTurn("")
	}
	return nil
}
