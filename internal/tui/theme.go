package tui

import (
	"image/color"

	"charm.land/lipgloss/v2"

	"github.com/mx-claw/mx-claw/internal/mdterm"
)

// theme holds the styles of the UI. With NO_COLOR every style is plain
// except for bold and faint, which carry meaning without colour.
type theme struct {
	user, dim, bold, ok, fail, warn, accent lipgloss.Style
	add, del, hunk, status, prompt          lipgloss.Style
	md                                      mdterm.Style
}

func newTheme(noColor bool) theme {
	s := lipgloss.NewStyle
	if noColor {
		return theme{
			user: s().Bold(true), dim: s().Faint(true), bold: s().Bold(true),
			ok: s(), fail: s().Bold(true), warn: s().Bold(true), accent: s().Bold(true),
			add: s(), del: s(), hunk: s(), status: s().Faint(true), prompt: s().Bold(true),
			md: mdterm.MonoStyle(),
		}
	}
	c := func(n string) color.Color { return lipgloss.Color(n) }
	return theme{
		user:   s().Bold(true).Foreground(c("12")),
		dim:    s().Faint(true),
		bold:   s().Bold(true),
		ok:     s().Foreground(c("2")),
		fail:   s().Foreground(c("1")),
		warn:   s().Foreground(c("3")),
		accent: s().Foreground(c("5")).Bold(true),
		add:    s().Foreground(c("2")),
		del:    s().Foreground(c("1")),
		hunk:   s().Foreground(c("6")),
		status: s().Foreground(c("8")),
		prompt: s().Foreground(c("12")).Bold(true),

		md: mdterm.DefaultStyle(),
	}
}
