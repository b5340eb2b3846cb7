//go:build unix

package openai

import (
	"net"
	"syscall"
)

// alive reports whether the server has neither closed c nor written to
// it: a peek that would block is the only good answer. (A read with a
// past deadline cannot tell: Go fails it before asking the kernel.)
func alive(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	open := false
	err = raw.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		open = rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK
		return true // never wait
	})
	return err == nil && open
}
