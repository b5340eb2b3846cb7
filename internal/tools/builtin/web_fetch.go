package builtin

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mx-claw/mx-claw/internal/tools"
	"github.com/mx-claw/mx-claw/internal/webfetch"
)

//go:embed web_fetch.md
var webFetchDescription string

const webFetchSchema = `{
  "type": "object",
  "properties": {
    "url": {
      "type": "string",
      "minLength": 1,
      "maxLength": 8192,
      "description": "The http or https URL to fetch."
    }
  },
  "required": ["url"],
  "additionalProperties": false
}`

// maxFetchOutput caps the page text a web_fetch result shows; the rest is
// kept for read_tool_output.
const maxFetchOutput = 48 << 10

// webFetch is the web_fetch tool.
type webFetch struct {
	f *webfetch.Fetcher
}

// NewWebFetch returns the web_fetch tool, fetching with f (its resolver,
// dialer, proxy and limits).
func NewWebFetch(f *webfetch.Fetcher) tools.Tool { return &webFetch{f: f} }

type webFetchArgs struct {
	URL string `json:"url"`
}

// webFetchInfo is what web_fetch is to the agent; Info returns it, shared.
// Its risk is read: a fetch changes nothing here. Whether it may reach the
// network is the permission policy's web rules' call, not the risk's.
var webFetchInfo = tools.Info{Name: "web_fetch", Description: webFetchDescription, Schema: json.RawMessage(webFetchSchema),
	Risk: tools.RiskRead, ConcurrencySafe: true}

func (*webFetch) Info() tools.Info { return webFetchInfo }

func (*webFetch) Summary(args json.RawMessage) string {
	var a webFetchArgs
	if decodeArgs(args, &a) != nil {
		return "Fetch a web page"
	}
	u := strings.TrimSpace(a.URL)
	if r := []rune(u); len(r) > 100 {
		u = string(r[:99]) + "…"
	}
	return "Fetch " + u
}

func (w *webFetch) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	var a webFetchArgs
	if err := decodeArgs(args, &a); err != nil {
		return tools.Result{}, err
	}
	var trusted func(string) bool
	if env != nil {
		trusted = env.TrustedHost
	}
	page, err := w.f.Fetch(ctx, a.URL, trusted)
	if err != nil {
		return tools.Result{}, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "URL: %s\n", page.URL)
	if len(page.Redirects) > 0 {
		fmt.Fprintf(&b, "Redirected from: %s\n", strings.Join(page.Redirects, " → "))
	}
	if page.MovedTo != "" {
		fmt.Fprintf(&b, "Status: %s\nThe server redirected to another host, which web_fetch does not follow by itself: %s\nFetch that URL with another web_fetch call if you need it.",
			page.StatusText, page.MovedTo)
		return tools.Result{Content: b.String()}, nil
	}
	if page.Status != 200 {
		fmt.Fprintf(&b, "Status: %s\n", page.StatusText)
	}
	if page.Title != "" {
		fmt.Fprintf(&b, "Title: %s\n", page.Title)
	}
	typ := page.Type
	if page.Title != "" || strings.Contains(typ, "html") {
		typ += ", shown as Markdown"
	}
	fmt.Fprintf(&b, "Content-Type: %s\n", typ)
	if page.Truncated {
		total := "more"
		if page.Length > 0 {
			total = humanSize(page.Length)
		}
		fmt.Fprintf(&b, "[the body was cut: only its first %s of %s were read]\n", humanSize(page.Size), total)
	}
	b.WriteByte('\n')
	text := page.Text
	if strings.TrimSpace(text) == "" {
		text = "(the page has no readable text)"
	}
	b.WriteString(w.cap(env, text))
	return tools.Result{Content: b.String(), IsError: page.Status >= 400}, nil
}

// cap returns text cut to maxFetchOutput at a line end, keeping the whole
// for read_tool_output when the session keeps outputs.
func (w *webFetch) cap(env *tools.Env, text string) string {
	if len(text) <= maxFetchOutput {
		return text
	}
	cut := strings.LastIndexByte(text[:maxFetchOutput], '\n')
	if cut < maxFetchOutput/2 {
		cut = maxFetchOutput
		for cut > 0 && !utf8Start(text[cut]) {
			cut--
		}
	}
	head := text[:cut]
	note := fmt.Sprintf("\n[page cut: %d of its %d bytes shown]", cut, len(text))
	if env != nil && env.Outputs != nil && env.CallID != "" {
		if spill, err := env.Outputs.Create(env.CallID); err == nil {
			spill.Write([]byte(text))
			note = keepOutput(spill, true, env.CallID)
		}
	}
	return head + note
}
