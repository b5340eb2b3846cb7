package web_test

import (
	"net/http"
	"net/http/httptest"
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
// CSP's Trusted Types really make innerHTML throw.
func TestModulesInChromium(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServerFS(web.FS()))
	mux.HandleFunc("/test/blank", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<!doctype html><html><head><title>unit</title></head><body></body></html>"))
	})
	mux.HandleFunc("/test/unit.js", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, "testdata/unit.js")
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
		}
	}
	t.Logf("%d checks", len(results))
}
