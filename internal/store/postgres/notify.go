package postgres

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mx-claw/mx-claw/internal/store"
)

// watch is the LISTEN connection behind SubscribeEvents: open while anyone
// subscribes.
type watch struct {
	once sync.Once
	hub  *store.NoticeHub

	mu     sync.Mutex
	cancel context.CancelFunc // stops the running listener
	loops  sync.WaitGroup     // the listeners not yet stopped
}

// SubscribeEvents returns notices of the events stored by any process
// sharing the database, from its NOTIFYs, until ctx ends. The first
// subscriber opens a connection that LISTENs (before SubscribeEvents
// returns, so nothing stored after it is missed); the last one closes it.
// When the connection drops, the listener connects again and sends a
// notice for every session (store.EventNotice with no SessionID).
func (s *Store) SubscribeEvents(ctx context.Context) (<-chan store.EventNotice, error) {
	s.watch.once.Do(func() {
		s.watch.hub = store.NewNoticeHub(s.startListening, s.watch.stop)
	})
	return s.watch.hub.Subscribe(ctx), nil
}

// startListening connects and listens, then leaves the rest to a goroutine.
// It runs under the hub's lock.
func (s *Store) startListening() {
	ctx, cancel := context.WithCancel(context.Background())
	s.watch.mu.Lock()
	s.watch.cancel = cancel
	s.watch.loops.Add(1)
	s.watch.mu.Unlock()
	conn, _ := s.listen(ctx)
	go func() {
		defer s.watch.loops.Done()
		s.listenLoop(ctx, conn)
	}()
}

// stop tells the listener to stop. It runs under the hub's lock, which the
// listener takes to publish, so it does not wait.
func (w *watch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cancel != nil {
		w.cancel()
		w.cancel = nil
	}
}

// close stops the listener and waits for every one started.
func (w *watch) close() {
	w.stop()
	w.loops.Wait()
}

// listen opens a connection that LISTENs on the store's channel.
func (s *Store) listen(ctx context.Context) (*pgx.Conn, error) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, s.connCfg.Copy())
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(cctx, "LISTEN "+pgx.Identifier{s.channel}.Sanitize()); err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	return conn, nil
}

// listenLoop publishes the notifications conn receives, connecting again
// (with a growing pause) when it fails, until ctx ends.
func (s *Store) listenLoop(ctx context.Context, conn *pgx.Conn) {
	pause := 100 * time.Millisecond
	for {
		if conn == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(pause):
			}
			pause = min(2*pause, 5*time.Second)
			var err error
			if conn, err = s.listen(ctx); err != nil {
				conn = nil
				continue
			}
			// Notices were lost while it was down.
			s.watch.hub.Publish(store.EventNotice{})
		}
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			conn.Close(context.Background())
			conn = nil
			if ctx.Err() != nil {
				return
			}
			continue
		}
		pause = 100 * time.Millisecond
		seq, id, ok := strings.Cut(n.Payload, " ")
		v, err := strconv.ParseInt(seq, 10, 64)
		if !ok || err != nil {
			continue
		}
		s.watch.hub.Publish(store.EventNotice{SessionID: id, Sequence: v})
	}
}
