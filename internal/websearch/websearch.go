// Package websearch asks a web search service for results: titles, URLs
// and snippets. Two kinds of service are spoken: a SearXNG instance (its
// JSON API, usually self-hosted, no key) and the Brave Search API (keyed).
// The key is passed in by the caller, who reads it from the secret chain;
// it is sent only in the request header and taken out of every error.
//
// Who may import it: the web_search tool (tools/builtin) and the wiring.
// It imports no other mx-claw package.
package websearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Backend kinds, as config.json names them.
const (
	KindSearXNG = "searxng"
	KindBrave   = "brave"
)

// DefaultBraveURL is the Brave Search API's web search endpoint.
const DefaultBraveURL = "https://api.search.brave.com/res/v1/web/search"

// MaxResults caps the results of one search.
const MaxResults = 20

// ErrNoKey is matched by the error of a keyed backend without a key.
var ErrNoKey = errors.New("no API key")

// Result is one search result.
type Result struct {
	Title   string
	URL     string
	Snippet string
}

// Searcher runs searches against one backend. It is safe for concurrent
// use.
type Searcher struct {
	// Kind is KindSearXNG or KindBrave.
	Kind string
	// URL is the SearXNG instance's base URL, or the Brave endpoint
	// (DefaultBraveURL if empty).
	URL string
	// Key returns the API key (for Brave); it is called for each search,
	// so a key set meanwhile is used.
	Key func() (string, error)
	// Client makes the requests; one with a 20-second timeout and the
	// environment's proxies if nil.
	Client *http.Client
}

// New checks a backend's settings and returns its Searcher.
func New(kind, baseURL string, key func() (string, error)) (*Searcher, error) {
	s := &Searcher{Kind: strings.ToLower(strings.TrimSpace(kind)), URL: strings.TrimSpace(baseURL), Key: key}
	switch s.Kind {
	case KindSearXNG:
		if s.URL == "" {
			return nil, errors.New("webSearch: a searxng backend needs \"url\", the instance's address")
		}
	case KindBrave:
		if s.URL == "" {
			s.URL = DefaultBraveURL
		}
	default:
		return nil, fmt.Errorf("webSearch: unknown backend %q (want %s or %s)", kind, KindSearXNG, KindBrave)
	}
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("webSearch: url %q is not an http(s) URL", s.URL)
	}
	return s, nil
}

// Search returns at most n results for query.
func (s *Searcher) Search(ctx context.Context, query string, n int) ([]Result, error) {
	n = min(max(n, 1), MaxResults)
	key := ""
	if s.Kind == KindBrave {
		if s.Key == nil {
			return nil, fmt.Errorf("%w for the brave search backend", ErrNoKey)
		}
		k, err := s.Key()
		if err != nil || k == "" {
			return nil, fmt.Errorf("%w for the brave search backend: set MX_CLAW_API_KEY_WEBSEARCH or store it as provider:websearch", ErrNoKey)
		}
		key = k
	}
	res, err := s.search(ctx, query, n, key)
	if err != nil && key != "" {
		err = errors.New(strings.ReplaceAll(err.Error(), key, "[redacted]"))
	}
	return res, err
}

func (s *Searcher) search(ctx context.Context, query string, n int, key string) ([]Result, error) {
	u, _ := url.Parse(s.URL)
	q := u.Query()
	switch s.Kind {
	case KindSearXNG:
		u = u.JoinPath("search")
		q.Set("q", query)
		q.Set("format", "json")
	case KindBrave:
		q.Set("q", query)
		q.Set("count", fmt.Sprint(n))
	}
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if key != "" {
		req.Header.Set("X-Subscription-Token", key)
	}
	client := s.Client
	if client == nil {
		client = &http.Client{Timeout: 20 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", s.Kind, errors.Unwrap(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", s.Kind, err)
	}
	if resp.StatusCode != http.StatusOK {
		msg := strings.TrimSpace(string(body))
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		return nil, fmt.Errorf("search %s: %s: %s", s.Kind, resp.Status, msg)
	}
	var out []Result
	switch s.Kind {
	case KindSearXNG:
		var r struct {
			Results []struct {
				Title   string `json:"title"`
				URL     string `json:"url"`
				Content string `json:"content"`
			} `json:"results"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, fmt.Errorf("search searxng: the answer is not its JSON (is format=json enabled on the instance?): %w", err)
		}
		for _, x := range r.Results {
			out = append(out, Result{Title: x.Title, URL: x.URL, Snippet: x.Content})
		}
	case KindBrave:
		var r struct {
			Web struct {
				Results []struct {
					Title       string `json:"title"`
					URL         string `json:"url"`
					Description string `json:"description"`
				} `json:"results"`
			} `json:"web"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, fmt.Errorf("search brave: the answer is not JSON: %w", err)
		}
		for _, x := range r.Web.Results {
			out = append(out, Result{Title: x.Title, URL: x.URL, Snippet: x.Description})
		}
	}
	if len(out) > n {
		out = out[:n]
	}
	return out, nil
}
