package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mx-claw/mx-claw/internal/tools"
)

// resultText renders a call's result as the text the model reads, capped
// at max bytes (head and tail kept, see tools.Truncate). The model reads
// text only: images, audio and binary resources are described, not sent.
// Structured content is shown as JSON when the server sent no content
// blocks.
func resultText(res *sdk.CallToolResult, max int) string {
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, contentText(c))
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	text := strings.Join(parts, "\n")
	if strings.TrimSpace(text) == "" {
		if res.IsError {
			return "the tool reported an error without a message"
		}
		return "(the tool returned no output)"
	}
	return tools.Truncate(text, max)
}

// contentText renders one content block.
func contentText(c sdk.Content) string {
	switch c := c.(type) {
	case *sdk.TextContent:
		return c.Text
	case *sdk.ImageContent:
		return fmt.Sprintf("[%s image, %d bytes, not shown]", orUnknown(c.MIMEType), len(c.Data))
	case *sdk.AudioContent:
		return fmt.Sprintf("[%s audio, %d bytes, not played]", orUnknown(c.MIMEType), len(c.Data))
	case *sdk.ResourceLink:
		s := "[resource link: " + c.URI
		if c.Name != "" {
			s += " (" + c.Name + ")"
		}
		if c.Description != "" {
			s += ": " + c.Description
		}
		return s + "]"
	case *sdk.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return "[empty resource]"
		}
		if r.Text != "" {
			return fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text)
		}
		return fmt.Sprintf("[resource %s: %s, %d bytes, not shown]", r.URI, orUnknown(r.MIMEType), len(r.Blob))
	}
	b, err := json.Marshal(c)
	if err != nil {
		return "[content mx-claw cannot show]"
	}
	return string(b)
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}
