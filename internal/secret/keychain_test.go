package secret

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// fakeSecurity stands in for /usr/bin/security: it keeps items in a map
// and records every call.
type fakeSecurity struct {
	items map[string]string // account -> password
	calls []string          // args, then stdin
}

func (fs *fakeSecurity) run(ctx context.Context, stdin string, args ...string) (string, string, error) {
	fs.calls = append(fs.calls, strings.Join(args, " ")+" <<< "+stdin)
	switch args[0] {
	case "-i":
		// add-generic-password -U -a "ACCOUNT" -s "SERVICE" -X "HEX"
		f := strings.Fields(stdin)
		if len(f) != 8 || f[0] != "add-generic-password" || f[6] != "-X" {
			return "", "bad command", nil
		}
		v, err := hex.DecodeString(strings.Trim(f[7], `"`))
		if err != nil {
			return "", "bad hex", nil
		}
		fs.items[strings.Trim(f[3], `"`)] = string(v)
		return "", "", nil
	case "find-generic-password":
		v, ok := fs.items[args[4]]
		if !ok {
			return "", "security: SecKeychainSearchCopyNext: The specified item could not be found in the keychain.", errors.New("exit status 44")
		}
		return v + "\n", "", nil
	case "delete-generic-password":
		delete(fs.items, args[4])
		return "", "", nil
	}
	return "", "", fmt.Errorf("unexpected %v", args)
}

func TestKeychainNeverPutsTheValueInArgv(t *testing.T) {
	t.Parallel()
	fs := &fakeSecurity{items: map[string]string{}}
	k := &Keychain{Service: "mx-claw-0123456789ab", Run: fs.run}
	ctx := context.Background()
	const value = "sk-keychain-value"
	if err := k.Set(ctx, "provider:openai", value); err != nil {
		t.Fatal(err)
	}
	hexValue := hex.EncodeToString([]byte(value))
	if len(fs.calls) == 0 || !strings.HasPrefix(fs.calls[0], "-i <<< add-generic-password -U -a \"provider:openai\" -s \"mx-claw-0123456789ab\" -X \""+hexValue+"\"\n") {
		t.Errorf("first call %q", fs.calls)
	}
	for _, c := range fs.calls {
		args, _, _ := strings.Cut(c, " <<< ")
		if strings.Contains(args, value) || strings.Contains(args, hexValue) {
			t.Errorf("the value is in argv: %q", args)
		}
		if strings.Contains(c, value) {
			t.Errorf("the value was sent unencoded: %q", c)
		}
	}
	if v, err := k.Get(ctx, "provider:openai"); err != nil || v != value {
		t.Errorf("Get = %q, %v", v, err)
	}
	if _, err := k.Get(ctx, "provider:none"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get of a missing item: %v", err)
	}
	if err := k.Delete(ctx, "provider:openai"); err != nil {
		t.Fatal(err)
	}

	// Over security's line limit: unavailable, never argv.
	before := len(fs.calls)
	err := k.Set(ctx, "provider:big", strings.Repeat("x", 2100))
	if !errors.Is(err, ErrUnavailable) || len(fs.calls) != before {
		t.Errorf("a value over the line limit: %v, %d calls", err, len(fs.calls)-before)
	}
}

func TestKeychainDecodesHexOutput(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"sk-plain":                          "sk-plain",
		"deadbeef":                          "deadbeef", // printable: security prints it as is
		hex.EncodeToString([]byte("clé-é")): "clé-é",
	}
	for in, want := range tests {
		if got := decodeSecurityOutput(in); got != want {
			t.Errorf("decodeSecurityOutput(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestChainFallsBackFromKeychain(t *testing.T) {
	t.Parallel()
	fs := &fakeSecurity{items: map[string]string{}}
	c := newChain(t, Options{OSStore: &Keychain{Service: "s", Run: fs.run}})
	ctx := context.Background()
	if b, err := c.Set(ctx, "a", strings.Repeat("k", 3000)); err != nil || b != NameFile {
		t.Errorf("a long key: stored in %q, %v; want the file", b, err)
	}
}
