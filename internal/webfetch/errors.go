package webfetch

import (
	"errors"
	"fmt"
)

// ErrScheme is matched by the error for a URL whose scheme is not http or
// https (file:, ftp:, data:, …).
var ErrScheme = errors.New("only http and https URLs can be fetched")

// ErrBlocked is matched by every error that refuses an address this
// machine alone can reach (see BlockedError).
var ErrBlocked = errors.New("address not allowed")

// ErrType is matched by the error for a response whose content type is not
// text the model can read (see TypeError).
var ErrType = errors.New("content type not supported")

// ErrTooManyRedirects is matched by the error for a chain of redirects
// longer than the limit.
var ErrTooManyRedirects = errors.New("too many redirects")

// ErrTimeout is matched by the error for a fetch that ran past its time
// limit.
var ErrTimeout = errors.New("time limit reached")

// BlockedError refuses a host that is, or resolves to, an address of this
// machine or its private network.
type BlockedError struct {
	// Host is the host as the URL names it.
	Host string
	// Addr is the address it is or resolved to.
	Addr string
	// Why names the kind of address ("loopback", "private", …).
	Why string
}

func (e *BlockedError) Error() string {
	if e.Host == e.Addr {
		return fmt.Sprintf("%s is a %s address, which web_fetch does not reach unless a rule names it (web_fetch(domain:%s))",
			e.Addr, e.Why, e.Host)
	}
	return fmt.Sprintf("%s resolves to %s, a %s address, which web_fetch does not reach unless a rule names the host (web_fetch(domain:%s))",
		e.Host, e.Addr, e.Why, e.Host)
}

func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

// TypeError refuses a response of a content type that is not text.
type TypeError struct {
	// Type is the response's media type, such as "application/pdf".
	Type string
}

func (e *TypeError) Error() string {
	return fmt.Sprintf("the response is %s, which web_fetch does not read (it reads HTML, JSON and text)", e.Type)
}

func (e *TypeError) Is(target error) bool { return target == ErrType }
