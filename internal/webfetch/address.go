package webfetch

import "net/netip"

// special are address ranges, beyond what netip classifies, that must not
// be reached from a page fetch: shared and reserved IPv4 space and the
// cloud metadata services that do not live in link-local space.
var special = []struct {
	prefix netip.Prefix
	why    string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "reserved"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (carrier-grade NAT)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("100.100.100.200/32"), "cloud metadata"},
	{netip.MustParsePrefix("168.63.129.16/32"), "cloud metadata"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), "cloud metadata"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "reserved"},
}

// nat64 is the well-known NAT64 prefix: its addresses carry an IPv4
// address in their last 32 bits, which is judged instead.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// blocked returns why a is an address a fetch must not reach, or "" if it
// is a public one.
func blocked(a netip.Addr) string {
	a = a.Unmap()
	if nat64.Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	switch {
	case !a.IsValid():
		return "invalid"
	case a == netip.AddrFrom4([4]byte{169, 254, 169, 254}):
		return "cloud metadata"
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate():
		return "private"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "link-local"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast"
	case a.Is4() && a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "broadcast"
	}
	for _, s := range special {
		if s.prefix.Contains(a) {
			return s.why
		}
	}
	return ""
}
