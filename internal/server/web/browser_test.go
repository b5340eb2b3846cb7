package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mx-claw/mx-claw/internal/server/web"
	"github.com/mx-claw/mx-claw/internal/testutil/browser"
)

// TestModulesInChromium runs testdata/unit.js in a real Chromium, on a
// page served with the panel's headers: the Markdown renderer against XSS
// payloads and for structure, streaming against whole rendering, the SSE
// parser split at every byte, the composer's Enter/IME/Esc handling, the
// transcript's replay without duplicates, the approval dock, and that the
// CSP's Trusted Types really make innerHTML throw, and the event stream's
// reconnects: after an end, after a silence longer than the heartbeat
// allows, resuming after the last event it has, and stopping at 401.
func TestModulesInChromium(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServerFS(web.FS()))
	mux.HandleFunc("/test/blank", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<!doctype html><html><head><title>unit</title><link rel=\"stylesheet\" href=\"/style.css\"></head><body></body></html>"))
	})
	mux.HandleFunc("/test/unit.js", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, "testdata/unit.js")
	})
	var (
		mu      sync.Mutex
		conns   int
		resumes []string
	)
	mux.HandleFunc("/test/sse", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conns++
		n := conns
		resumes = append(resumes, r.Header.Get("Last-Event-ID")+"/"+r.URL.Query().Get("after"))
		mu.Unlock()
		if n == 3 {
			http.Error(w, `{"error":{"code":"unauthorized","message":"no"}}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(frame string) {
			io.WriteString(w, frame)
			w.(http.Flusher).Flush()
		}
		if n == 1 {
			send("id: 1\nevent: a\ndata: {\"type\":\"a\",\"sequence\":1}\n\n")
			// A replay that overlaps: the client must drop it.
			send("id: 1\nevent: a\ndata: {\"type\":\"a\",\"sequence\":1}\n\n")
			send("id: 2\nevent: b\ndata: {\"type\":\"b\",\"sequence\":2}\n\n")
			return // the stream ends
		}
		send("id: 3\nevent: c\ndata: {\"type\":\"c\",\"sequence\":3}\n\n")
		send("event: message.delta\ndata: {\"type\":\"message.delta\",\"sequence\":0}\n\n")
		<-r.Context().Done() // silent until the client gives up
	})
	// Every answer carries the panel's policy, as the server sends it.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", web.CSP)
		mux.ServeHTTP(w, r)
	}))
	defer srv.Close()

	ctx := browser.Start(t, 60*time.Second)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/test/blank")); err != nil {
		t.Fatal(err)
	}
	type result struct {
		Name string `json:"name"`
		OK   bool   `json:"ok"`
		Msg  string `json:"msg"`
	}
	results, err := chromedp.Run(ctx, chromedp.Evaluate[[]result](`import('/test/unit.js').then((m) => m.run())`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if len(results) < 40 {
		t.Errorf("only %d checks ran", len(results))
	}
	for _, r := range results {
		if !r.OK {
			t.Errorf("%s: %s", r.Name, r.Msg)
		} else if strings.Contains(r.Name, " took ") || strings.Contains(r.Name, " fast (") {
			t.Log(r.Name)
		}
	}
	t.Logf("%d checks", len(results))
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(resumes, " "); got != "0/0 2/2 3/3" {
		t.Errorf("the stream resumed with Last-Event-ID/after %q, want \"0/0 2/2 3/3\"", got)
	}
}
