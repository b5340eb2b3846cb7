package tui

import (
	"strconv"
	"strings"
)

// splitAttachments undoes attachMentions on a stored user message: it
// returns the text the user typed and the files its <file> blocks carry
// (path and line count), so that a resumed or returned message reads as
// it was typed. A message without such blocks is returned as it is.
func splitAttachments(content string) (string, []attachment) {
	const open = "\n\n<file path="
	for start := strings.Index(content, open); start >= 0; {
		if atts, ok := parseBlocks(content[start:]); ok {
			return content[:start], atts
		}
		next := strings.Index(content[start+1:], open)
		if next < 0 {
			break
		}
		start += 1 + next
	}
	return content, nil
}

// parseBlocks parses s as nothing but <file> blocks, as readMention
// writes them.
func parseBlocks(s string) ([]attachment, bool) {
	var atts []attachment
	for s != "" {
		rest, ok := strings.CutPrefix(s, "\n\n<file path=")
		if !ok {
			return nil, false
		}
		nl := strings.Index(rest, ">\n")
		if nl < 0 {
			return nil, false
		}
		rel, err := strconv.Unquote(rest[:nl])
		if err != nil {
			return nil, false
		}
		body := rest[nl+2:]
		// The block ends at the last "</file>" before the next block or
		// the end: the file itself may contain the tag.
		end := -1
		for i := strings.Index(body, "</file>"); i >= 0; {
			after := body[i+len("</file>"):]
			if after == "" || strings.HasPrefix(after, "\n\n<file path=") {
				end = i
				break
			}
			j := strings.Index(after, "</file>")
			if j < 0 {
				break
			}
			i += len("</file>") + j
		}
		if end < 0 {
			return nil, false
		}
		text := body[:end]
		if i := strings.LastIndex(text, "[truncated: only the first "); i >= 0 && strings.HasSuffix(text, " bytes are attached]\n") {
			text = text[:i]
		}
		atts = append(atts, attachment{rel: rel, lines: strings.Count(text, "\n")})
		s = body[end+len("</file>"):]
	}
	return atts, len(atts) > 0
}

// collapseAttachments returns the typed text of a stored user message,
// without the <file> blocks its @path mentions added.
func collapseAttachments(content string) string {
	text, _ := splitAttachments(content)
	return text
}
