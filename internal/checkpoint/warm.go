package checkpoint

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Warming up. A workspace's first whole snapshot in a process reads and
// saves every file the stat cache does not know (all of them, the first
// time: seconds for 10,000 files), and so delays the first command that is
// not read-only. WarmUp takes that snapshot in the background, from when
// a session's turn starts, while the model thinks:
//
//   - one goroutine that works in slices of warmSlice and rests
//     warmRest after each (and yields to other goroutines after each
//     file), so it takes at most two thirds of one core: on two cores the
//     turn, and the commands it runs, keep more than a core;
//   - it publishes the entries it has saved as it goes. The first
//     Snapshot stops it and takes over: it uses those entries as its stat
//     cache, so it reads only the files the warm-up had not reached (and
//     those changed since), and never waits for the warm-up's thread.
//     A warm-up that finished hands over its snapshot and its inotify
//     watcher, and the first Snapshot costs what a later one does;
//   - a read-only turn never takes a snapshot, so it never waits for it;
//     Close stops it (and keeps what it saved in the stat cache, for the
//     next process).

// warmSlice and warmRest pace the warm-up. Why not a lower priority
// instead (a thread of its own with a higher nice value)? A Go goroutine
// locked to a thread holds one of the process's GOMAXPROCS processors
// while it runs, and a low-priority thread that the kernel leaves waiting
// on a busy machine keeps holding it: the turn's goroutines would lose a
// processor to the very thread that was meant to yield, and the first
// snapshot, which stops the warm-up, would wait on it for seconds.
const (
	warmSlice = 20 * time.Millisecond
	warmRest  = 10 * time.Millisecond
)

// warmPublish is how many entries the warm-up saves between two
// publications.
const warmPublish = 64

// warmUp is a background first snapshot.
type warmUp struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when its goroutine ends

	mu      sync.Mutex
	entries []warmEntry // saved so far, in walk order
	result  *warmResult // the whole snapshot, once finished
	taken   bool        // a Snapshot (or Close) took over: publish nothing more
}

// warmEntry is one path the warm-up has looked at.
type warmEntry struct {
	rel    string
	e      Entry
	exists bool
}

// warmResult is a finished warm-up's snapshot and the watcher that has
// followed the workspace since its walk.
type warmResult struct {
	index map[string]Entry
	watch *watcher
}

// WarmUp starts the store's first whole snapshot in the background (see
// above) and returns at once. It does nothing when this process has taken
// one already or a warm-up was started before.
func (s *Store) WarmUp() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.warm != nil || s.scanned {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	wu := &warmUp{cancel: cancel, done: make(chan struct{})}
	s.warm = wu
	go s.warmRun(ctx, wu)
}

// WaitWarm waits until a warm-up started by WarmUp has ended (finished or
// stopped), or ctx ends.
func (s *Store) WaitWarm(ctx context.Context) error {
	s.mu.Lock()
	wu := s.warm
	s.mu.Unlock()
	if wu == nil {
		return nil
	}
	select {
	case <-wu.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// warmRun is the warm-up's goroutine.
func (s *Store) warmRun(ctx context.Context, wu *warmUp) {
	defer close(wu.done)
	defer wu.cancel()
	s.mu.Lock()
	s.loadIndex()
	prev := s.index // never changed once it is the index
	noWatch := s.lim.NoWatch || s.noWatch
	s.mu.Unlock()

	start := time.Now()
	pace := newPacer(ctx)
	var w *watcher
	if !noWatch {
		var ok bool
		if w, ok = newWatcher(); ok && w.add(s.root, "") != nil {
			w.close()
			w = nil
		}
	}
	items, _, err := s.walk(ctx, func(rel string) {
		if w != nil && w.add(s.root, rel) != nil {
			w.close()
			w = nil
		}
		pace.step()
	})
	if err != nil {
		if w != nil {
			w.close()
		}
		return
	}
	var budget atomic.Int64
	budget.Store(s.lim.MaxScanBytes)
	batch := make([]warmEntry, 0, warmPublish)
	publish := func() bool {
		wu.mu.Lock()
		defer wu.mu.Unlock()
		if wu.taken {
			return false
		}
		wu.entries = append(wu.entries, batch...)
		batch = batch[:0]
		return true
	}
	for _, it := range items {
		if ctx.Err() != nil {
			break
		}
		p, had := prev[it.rel]
		abs := filepath.Join(s.root, filepath.FromSlash(it.rel))
		e, exists, err := s.entry(it.rel, func() (statInfo, error) { return lstatInfo(abs) }, p, had, start, &budget)
		if err != nil {
			break
		}
		batch = append(batch, warmEntry{rel: it.rel, e: e, exists: exists})
		if len(batch) == warmPublish && !publish() {
			break
		}
		pace.step()
	}
	if ctx.Err() != nil || len(batch) > 0 && !publish() {
		if w != nil {
			w.close()
		}
		return
	}
	wu.mu.Lock()
	if wu.taken || len(wu.entries) != len(items) {
		wu.mu.Unlock()
		if w != nil {
			w.close()
		}
		return
	}
	idx := make(map[string]Entry, len(items))
	for _, we := range wu.entries {
		if we.exists {
			idx[we.rel] = we.e
		}
	}
	wu.result = &warmResult{index: idx, watch: w}
	wu.mu.Unlock()
	// Hand it over now if no snapshot is being taken; else the snapshot
	// takes it.
	if s.mu.TryLock() {
		if s.warm == wu {
			s.takeWarm()
		}
		s.mu.Unlock()
	}
}

// lstatInfo is the stat data of the path abs.
func lstatInfo(abs string) (statInfo, error) {
	fi, err := os.Lstat(abs)
	if err != nil {
		return statInfo{}, err
	}
	return infoOf(fi), nil
}

// takeWarm stops a warm-up and takes what it did: its whole snapshot (and
// watcher) if it finished, else the entries it saved, as stat cache. It
// does not wait for the warm-up's goroutine. s.mu is held.
func (s *Store) takeWarm() {
	wu := s.warm
	if wu == nil {
		return
	}
	wu.cancel()
	wu.mu.Lock()
	wu.taken = true
	res, partial := wu.result, wu.entries
	wu.result, wu.entries = nil, nil
	wu.mu.Unlock()
	switch {
	case res != nil:
		if s.watch != nil || s.scanned {
			if res.watch != nil {
				res.watch.close()
			}
			return
		}
		s.index, s.watch, s.scanned = res.index, res.watch, true
		s.scheduleSave()
	case len(partial) > 0 && !s.scanned:
		idx := maps.Clone(s.index)
		if idx == nil {
			idx = make(map[string]Entry, len(partial))
		}
		for _, we := range partial {
			if we.exists {
				idx[we.rel] = we.e
			}
		}
		s.index = idx
		s.scheduleSave()
	}
}

// pacer keeps the warm-up to its share of the CPU: after warmSlice of
// work it rests warmRest (or until ctx ends); in between it yields.
type pacer struct {
	ctx   context.Context
	since time.Time
	rest  *time.Timer
}

func newPacer(ctx context.Context) *pacer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &pacer{ctx: ctx, since: time.Now(), rest: t}
}

// step is called after each piece of work.
func (p *pacer) step() {
	if time.Since(p.since) < warmSlice {
		runtime.Gosched()
		return
	}
	p.rest.Reset(warmRest)
	select {
	case <-p.rest.C:
	case <-p.ctx.Done():
		p.rest.Stop()
	}
	p.since = time.Now()
}
