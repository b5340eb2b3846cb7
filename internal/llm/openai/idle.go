package openai

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"time"
)

// errIdle is the cause of an attempt cancelled by its idle watch.
var errIdle = errors.New("idle timeout")

// idleWatch cancels one attempt when the server sends nothing for d: no
// headers, or no next byte of the stream. Each byte read pushes the
// deadline back.
type idleWatch struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	d      time.Duration
	timer  *time.Timer
	// read says a byte of the body arrived.
	read atomic.Bool
}

// watch starts an idle watch on a child of ctx; d <= 0 watches nothing.
func watch(ctx context.Context, d time.Duration) *idleWatch {
	w := &idleWatch{d: d}
	w.ctx, w.cancel = context.WithCancelCause(ctx)
	if d > 0 {
		w.timer = time.AfterFunc(d, func() { w.cancel(errIdle) })
	}
	return w
}

// touch pushes the deadline back after a read.
func (w *idleWatch) touch() {
	if w.timer != nil {
		w.timer.Reset(w.d)
	}
}

// stop ends the watch and releases its context.
func (w *idleWatch) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
	w.cancel(nil)
}

// stalled reports whether the watch cancelled the attempt.
func (w *idleWatch) stalled() bool {
	return errors.Is(context.Cause(w.ctx), errIdle)
}

// body wraps a response body so that every read pushes the deadline
// back. Closing it ends the watch, after the body: cancelling the
// attempt's context earlier would cut the connection the answer came on
// instead of letting it serve the next request.
func (w *idleWatch) body(rc io.ReadCloser) io.ReadCloser {
	return &idleBody{ReadCloser: rc, w: w}
}

type idleBody struct {
	io.ReadCloser
	w *idleWatch
}

func (b *idleBody) Close() error {
	err := b.ReadCloser.Close()
	b.w.stop()
	return err
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.w.read.Store(true)
		b.w.touch()
	}
	return n, err
}
