package secret

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"unicode/utf8"
)

// securityPath is macOS's keychain tool.
const securityPath = "/usr/bin/security"

// securityMaxLine is what `security -i` reads of one command line (its
// buffer is about 4 KiB); a longer line would be cut, so such a value makes
// the Keychain unavailable instead of moving it into argv.
const securityMaxLine = 4000

// Keychain stores secrets in the macOS login keychain as generic
// passwords (service Service, account provider:NAME) with the `security`
// tool. Values are written through `security -i`: the command line
// `add-generic-password -U -a ACCOUNT -s SERVICE -X HEX` goes to its
// standard input, so the value never appears in a process argument. Reads
// and deletes name only the account and the service.
type Keychain struct {
	// Service is the item's service, ServiceName(home).
	Service string
	// Run runs security with args and stdin and returns its standard
	// output and standard error; nil runs /usr/bin/security. Tests set it.
	Run func(ctx context.Context, stdin string, args ...string) (stdout, stderr string, err error)
}

// Name returns "keychain".
func (k *Keychain) Name() string { return NameKeychain }

func (k *Keychain) run(ctx context.Context, stdin string, args ...string) (string, string, error) {
	if k.Run != nil {
		return k.Run(ctx, stdin, args...)
	}
	ctx, cancel := context.WithTimeout(ctx, osStoreTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, securityPath, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if errors.Is(err, exec.ErrNotFound) || ctx.Err() != nil {
		return "", "", fmt.Errorf("run %s: %w", securityPath, ErrUnavailable)
	}
	return out.String(), errb.String(), err
}

// quoteSecurity quotes an argument for a `security -i` command line.
func quoteSecurity(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}

// notFound reports whether security's output says the item is missing
// (exit status 44, "could not be found").
func notFound(stderr string, err error) bool {
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 44 {
		return true
	}
	return strings.Contains(stderr, "could not be found")
}

// Get returns the value stored under key.
func (k *Keychain) Get(ctx context.Context, key string) (string, error) {
	out, stderr, err := k.run(ctx, "", "find-generic-password", "-s", k.Service, "-a", key, "-w")
	switch {
	case errors.Is(err, ErrUnavailable):
		return "", err
	case err != nil && notFound(stderr, err):
		return "", ErrNotFound
	case err != nil:
		return "", fmt.Errorf("keychain: %v: %w", err, ErrUnavailable)
	}
	return decodeSecurityOutput(strings.TrimRight(out, "\r\n")), nil
}

// decodeSecurityOutput undoes `security -w`'s hex form, which it prints
// for a password that is not printable ASCII; a printable value is printed
// as it is, even when it looks like hex.
func decodeSecurityOutput(s string) string {
	if len(s) == 0 || len(s)%2 != 0 {
		return s
	}
	b, err := hex.DecodeString(s)
	if err != nil || !utf8.Valid(b) {
		return s
	}
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return string(b)
		}
	}
	return s
}

// Set stores value under key through `security -i`.
func (k *Keychain) Set(ctx context.Context, key, value string) error {
	if err := checkValue(value); err != nil {
		return fmt.Errorf("store %s: %w", key, err)
	}
	line := "add-generic-password -U -a " + quoteSecurity(key) + " -s " + quoteSecurity(k.Service) +
		" -X " + quoteSecurity(hex.EncodeToString([]byte(value))) + "\n"
	if len(line) > securityMaxLine {
		return fmt.Errorf("value too long for `security -i` (%d-byte line, limit %d): %w", len(line), securityMaxLine, ErrUnavailable)
	}
	_, stderr, err := k.run(ctx, line, "-i")
	if errors.Is(err, ErrUnavailable) {
		return err
	}
	// `security -i` may exit 0 after a failed command; it then says so on
	// stderr (which is never shown: only its absence is checked). Reading
	// the item back proves it was stored.
	if err != nil || strings.TrimSpace(stderr) != "" {
		return fmt.Errorf("keychain refused %s: %w", key, ErrUnavailable)
	}
	got, err := k.Get(ctx, key)
	if err != nil || got != value {
		return fmt.Errorf("keychain did not keep %s: %w", key, ErrUnavailable)
	}
	return nil
}

// Delete removes key.
func (k *Keychain) Delete(ctx context.Context, key string) error {
	_, stderr, err := k.run(ctx, "", "delete-generic-password", "-s", k.Service, "-a", key)
	switch {
	case err == nil, notFound(stderr, err):
		return nil
	case errors.Is(err, ErrUnavailable):
		return err
	}
	return fmt.Errorf("keychain: %v: %w", err, ErrUnavailable)
}
