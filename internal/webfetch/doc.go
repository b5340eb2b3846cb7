// Package webfetch reads a web page for the model, safely: it fetches a
// URL over HTTP(S) with a size cap, a time limit and a bounded number of
// redirects, and turns what it got into text — HTML into Markdown (the
// page's main content, without scripts, styles and navigation), JSON and
// plain text as they are; anything else is refused with its type.
//
// The client is built against server-side request forgery. A page the
// model asks for must not reach what only this machine can reach: the
// loopback, private, link-local and cloud-metadata addresses are refused
// unless the caller says a rule names the host (see [Fetcher.Fetch]'s
// trusted). A host name is resolved once per connection and the connection
// is made to the very address that was checked, so a DNS answer that
// changes between the check and the connection (DNS rebinding) cannot
// lead elsewhere. Only http and https are fetched. Proxies from the
// environment (HTTP_PROXY, HTTPS_PROXY, NO_PROXY) are used when set; the
// target is then checked by resolving it here, and the proxy itself may be
// on a private address, since the user chose it.
//
// Redirects are followed on the same host only. A redirect to another
// host ends the fetch with the new URL reported, so the model asks for it
// in a call of its own, which the permission rules judge by its host.
//
// The resolver and the dialer are fields, so that tests map a "public"
// name to a local test server without touching the network or any global.
//
// Who may import it: the web_fetch tool (tools/builtin) and its wiring. It
// imports no other mx-claw package.
package webfetch
