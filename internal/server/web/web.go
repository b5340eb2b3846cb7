package web

import (
	"embed"
	"io/fs"
)

//go:embed static
var static embed.FS

// CSP is the Content-Security-Policy the panel is served with (the server
// sends it with every file of FS). No inline script or style, no eval,
// nothing from another origin; the page may only talk to the server that
// served it; and Trusted Types are required, so assigning a string to
// innerHTML or any other HTML sink throws instead of parsing markup.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; manifest-src 'self'; object-src 'none'; base-uri 'none'; " +
	"form-action 'self'; frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types 'none'"

// FS returns the panel's files, rooted at the directory that holds
// index.html, to be served at "/".
func FS() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		// The directory is embedded at build time; its absence is a
		// build error, not an input.
		panic(err)
	}
	return sub
}
