//go:build !unix

package openai

import "net"

// alive cannot look at a socket without reading from it here, so a spare
// connection is never trusted: it is closed and a new one dialed.
func alive(net.Conn) bool { return false }
