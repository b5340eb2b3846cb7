package server

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/sse"
)

// BenchmarkTurnWatched runs a turn streaming 1,000 deltas (as fast as
// the fake model can) to 0, 10 and 100 streams of an in-process server;
// ns/op is the turn's time. The end-to-end figures, with the server in
// its own process, are BenchmarkServeFanout in cmd/mx-claw.
func BenchmarkTurnWatched(b *testing.B) {
	for _, n := range []int{0, 10, 100} {
		b.Run(strconv.Itoa(n)+"-streams", func(b *testing.B) { benchTurnWatched(b, n) })
	}
}

func benchTurnWatched(b *testing.B, clients int) {
	text := strings.Repeat("word ", 4000)
	reply := llmtest.Reply{Text: text, Pieces: 1000}
	f := newFixture(b, nil)
	s := f.newSession()
	for range b.N {
		b.StopTimer()
		f.llm.Enqueue(reply)
		evs := f.storedEvents(s.ID)
		from := strconv.FormatInt(evs[len(evs)-1].Sequence, 10)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		ready := make(chan struct{}, clients)
		for range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequestWithContext(ctx, "GET", f.ts.URL+"/api/sessions/"+s.ID+"/events?after="+from, nil)
				req.Header.Set("Authorization", "Bearer "+f.srv.Token())
				resp, err := f.ts.Client().Do(req)
				if err != nil {
					ready <- struct{}{}
					return
				}
				defer resp.Body.Close()
				r := sse.NewReader(bufio.NewReader(resp.Body))
				for {
					ev, err := r.NextRaw()
					if err != nil {
						return
					}
					if string(ev.Event) == "stream.ready" {
						ready <- struct{}{}
					}
					if string(ev.Event) == "turn.completed" {
						return
					}
				}
			}()
		}
		for range clients {
			<-ready
		}
		b.StartTimer()
		if err := f.app.Core.Run(context.Background(), agent.TurnRequest{SessionID: s.ID, Input: "go"}, f.srv.sink); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		wg.Wait()
		cancel()
		b.StartTimer()
	}
}
