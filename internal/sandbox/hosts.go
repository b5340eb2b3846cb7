package sandbox

import (
	"errors"
	"fmt"
	"net"
	"strings"
)

// checkHostPattern refuses an allowedHosts entry that is not a plain host
// name or IP address ("example.com", ".example.com" or "*.example.com"
// for subdomains only are accepted).
func checkHostPattern(p string) error {
	h := strings.TrimPrefix(strings.TrimPrefix(p, "*"), ".")
	if _, err := canonicalHost(h); err != nil {
		return fmt.Errorf("%q: %v", p, err)
	}
	return nil
}

// canonicalHost lower-cases a host name and drops a trailing dot; it
// refuses anything but letters, digits, '-', '.', and IP literals.
func canonicalHost(h string) (string, error) {
	if h == "" {
		return "", errors.New("empty host")
	}
	if ip := net.ParseIP(strings.Trim(h, "[]")); ip != nil {
		return ip.String(), nil
	}
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if len(h) > 253 {
		return "", errors.New("host name too long")
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" {
			return "", errors.New("empty label in host name")
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return "", fmt.Errorf("character %q is not allowed in a host name", r)
			}
		}
	}
	return h, nil
}

// HostAllowed reports whether host (as a request names it, without the
// port) matches one of patterns: the same host, or a subdomain of it
// ("api.example.com" for "example.com"; ".example.com" and
// "*.example.com" match subdomains only). A host that does not parse as a
// plain name — a NUL byte, a space, a '/' — never matches.
func HostAllowed(host string, patterns []string) bool {
	h, err := canonicalHost(host)
	if err != nil {
		return false
	}
	for _, p := range patterns {
		subOnly := strings.HasPrefix(p, ".") || strings.HasPrefix(p, "*.")
		want, err := canonicalHost(strings.TrimPrefix(strings.TrimPrefix(p, "*"), "."))
		if err != nil {
			continue
		}
		if h == want && !subOnly {
			return true
		}
		if net.ParseIP(want) == nil && strings.HasSuffix(h, "."+want) {
			return true
		}
	}
	return false
}
