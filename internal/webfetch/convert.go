package webfetch

import (
	"net/url"
	"strings"

	htmlmd "github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Why a library: turning HTML into Markdown that reads well (nested lists,
// tables, code blocks, escaping of Markdown's own characters, relative
// links made absolute) is a field of its own; JohannesKaufmann's
// html-to-markdown (MIT, maintained) is Go's usual choice and costs about
// 1.5 MB of binary. Choosing the main content is ours: the converter
// renders whatever it is given.

// dropped are elements that never hold readable content.
var dropped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Svg: true, atom.Canvas: true, atom.Iframe: true, atom.Object: true, atom.Embed: true,
	atom.Link: true, atom.Meta: true, atom.Head: true, atom.Button: true, atom.Input: true,
	atom.Select: true, atom.Textarea: true, atom.Dialog: true,
}

// chrome are elements around a page's content (site navigation, banners,
// sidebars, footers), dropped when the page marks no main content.
var chrome = map[atom.Atom]bool{
	atom.Nav: true, atom.Header: true, atom.Footer: true, atom.Aside: true, atom.Form: true,
}

// chromeRoles are ARIA roles of the same.
var chromeRoles = map[string]bool{
	"navigation": true, "banner": true, "contentinfo": true, "complementary": true,
	"search": true, "menu": true, "menubar": true, "dialog": true, "alertdialog": true,
}

// htmlToMarkdown returns an HTML page's title and its main content as
// Markdown, links made absolute against pageURL.
func htmlToMarkdown(page string, pageURL *url.URL) (string, string, error) {
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		return "", "", err
	}
	title := strings.Join(strings.Fields(textOf(find(doc, func(n *html.Node) bool { return n.DataAtom == atom.Title }))), " ")
	root := mainContent(doc)
	prune(root, root.DataAtom == atom.Body || root.Type == html.DocumentNode)
	conv := htmlmd.NewConverter(htmlmd.WithPlugins(
		base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(), table.NewTablePlugin()))
	md, err := conv.ConvertNode(root, htmlmd.WithDomain(pageURL.String()))
	if err != nil {
		return "", "", err
	}
	return title, strings.TrimSpace(string(md)), nil
}

// mainContent returns the element holding the page's main content: its
// <main>, else its only <article>, else the element of role "main", else
// <body>, else the document.
func mainContent(doc *html.Node) *html.Node {
	if n := find(doc, func(n *html.Node) bool { return n.DataAtom == atom.Main && !hidden(n) }); n != nil {
		return n
	}
	var articles []*html.Node
	walk(doc, func(n *html.Node) bool {
		if n.DataAtom == atom.Article && !hidden(n) {
			articles = append(articles, n)
			return false
		}
		return true
	})
	if len(articles) == 1 {
		return articles[0]
	}
	if n := find(doc, func(n *html.Node) bool { return attr(n, "role") == "main" && !hidden(n) }); n != nil {
		return n
	}
	if n := find(doc, func(n *html.Node) bool { return n.DataAtom == atom.Body }); n != nil {
		return n
	}
	return doc
}

// prune removes from n what is not content: dropped elements, hidden
// ones, and with noChrome the page's navigation, banners and sidebars.
func prune(n *html.Node, noChrome bool) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		switch {
		case c.Type == html.CommentNode:
			n.RemoveChild(c)
		case c.Type == html.ElementNode && (dropped[c.DataAtom] || hidden(c) ||
			noChrome && (chrome[c.DataAtom] || chromeRoles[attr(c, "role")])):
			n.RemoveChild(c)
		default:
			prune(c, noChrome)
		}
		c = next
	}
}

// hidden reports whether an element is marked as not shown.
func hidden(n *html.Node) bool {
	if n.Type != html.ElementNode {
		return false
	}
	if _, ok := attrOK(n, "hidden"); ok || attr(n, "aria-hidden") == "true" {
		return true
	}
	style := strings.ReplaceAll(strings.ToLower(attr(n, "style")), " ", "")
	return strings.Contains(style, "display:none") || strings.Contains(style, "visibility:hidden")
}

func attr(n *html.Node, key string) string {
	v, _ := attrOK(n, key)
	return strings.TrimSpace(v)
}

func attrOK(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// find returns the first node under n (in document order) that ok
// accepts, or nil.
func find(n *html.Node, ok func(*html.Node) bool) *html.Node {
	var found *html.Node
	walk(n, func(c *html.Node) bool {
		if found != nil {
			return false
		}
		if c.Type == html.ElementNode && ok(c) {
			found = c
			return false
		}
		return true
	})
	return found
}

// walk calls visit on n and its descendants in document order; visit
// returns false to skip a node's children.
func walk(n *html.Node, visit func(*html.Node) bool) {
	if !visit(n) {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, visit)
	}
}

// textOf returns the text under n.
func textOf(n *html.Node) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	walk(n, func(c *html.Node) bool {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
		return true
	})
	return b.String()
}
