package builtin

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"strings"

	"github.com/mx-claw/mx-claw/internal/tools"
	"github.com/mx-claw/mx-claw/internal/websearch"
)

//go:embed web_search.md
var webSearchDescription string

const webSearchSchema = `{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": 400, "description": "What to search for."},
    "count": {"type": "integer", "minimum": 1, "maximum": 20, "description": "How many results. Default 8."}
  },
  "required": ["query"],
  "additionalProperties": false
}`

// webSearch is the web_search tool.
type webSearch struct {
	s *websearch.Searcher
}

// NewWebSearch returns the web_search tool searching with s.
func NewWebSearch(s *websearch.Searcher) tools.Tool { return &webSearch{s: s} }

type webSearchArgs struct {
	Query string  `json:"query"`
	Count jsonInt `json:"count"`
}

// webSearchInfo is what web_search is to the agent; Info returns it,
// shared. Its risk is read: a search changes nothing here; the permission
// policy's web rules decide whether the query may leave the machine.
var webSearchInfo = tools.Info{Name: "web_search", Description: webSearchDescription, Schema: json.RawMessage(webSearchSchema),
	Risk: tools.RiskRead, ConcurrencySafe: true}

func (*webSearch) Info() tools.Info { return webSearchInfo }

func (*webSearch) Summary(args json.RawMessage) string {
	var a webSearchArgs
	if decodeArgs(args, &a) != nil {
		return "Search the web"
	}
	return fmt.Sprintf("Search the web for %q", oneLineCommand(a.Query))
}

func (w *webSearch) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	var a webSearchArgs
	if err := decodeArgs(args, &a); err != nil {
		return tools.Result{}, err
	}
	n := int(a.Count)
	if n <= 0 {
		n = 8
	}
	results, err := w.s.Search(ctx, strings.TrimSpace(a.Query), n)
	if err != nil {
		return tools.Result{}, err
	}
	if len(results) == 0 {
		return tools.Result{Content: fmt.Sprintf("No results for %q.", a.Query)}, nil
	}
	var b strings.Builder
	for i, r := range results {
		fmt.Fprintf(&b, "%d. %s\n   %s\n", i+1, plainSnippet(r.Title), r.URL)
		if s := plainSnippet(r.Snippet); s != "" {
			fmt.Fprintf(&b, "   %s\n", s)
		}
	}
	return tools.Result{Content: strings.TrimRight(b.String(), "\n")}, nil
}

var tags = regexp.MustCompile(`<[^>]*>`)

// plainSnippet drops the markup search services put in titles and
// snippets (<strong>, entities) and keeps one line of at most 400 bytes.
func plainSnippet(s string) string {
	s = strings.Join(strings.Fields(html.UnescapeString(tags.ReplaceAllString(s, ""))), " ")
	if len(s) > 400 {
		cut := 400
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
