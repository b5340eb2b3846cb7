package store

import (
	"os"
	"strings"
	"testing"
)

func TestNewOwner(t *testing.T) {
	t.Parallel()
	a, b := NewOwner(), NewOwner()
	if a == b {
		t.Errorf("NewOwner twice = %q", a)
	}
	host, pid, ok := ParseOwner(a)
	if !ok || host != Hostname() || pid != os.Getpid() {
		t.Errorf("ParseOwner(%q) = %q, %d, %v", a, host, pid, ok)
	}
	if suffix := a[strings.LastIndex(a, ":")+1:]; len(suffix) != 8 {
		t.Errorf("random part %q is not 8 hex digits", suffix)
	}
	for _, bad := range []string{"", "x", "host:abc:ff", ":12:ff", "host:-1:ff", "host:0:ff"} {
		if _, _, ok := ParseOwner(bad); ok {
			t.Errorf("ParseOwner(%q) ok", bad)
		}
	}
	if host, pid, ok := ParseOwner("a:b:42:ff"); !ok || host != "a:b" || pid != 42 {
		t.Errorf("ParseOwner with colon host = %q, %d, %v", host, pid, ok)
	}
}
