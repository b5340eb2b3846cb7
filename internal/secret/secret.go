package secret

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
)

// Backend and source names, as Chain.Get and Chain.Backend report them.
const (
	NameCommand       = "command"
	NameEnv           = "env"
	NameSecretService = "secret-service"
	NameKeychain      = "keychain"
	NameFile          = "file"
)

// SecretReader is a source of secrets, read-only or not.
type SecretReader interface {
	// Name is the backend's name for status lines ("env", "file", ...).
	Name() string
	// Get returns the value stored under key ("provider:NAME"), or an
	// error wrapping ErrNotFound.
	Get(ctx context.Context, key string) (string, error)
}

// SecretStore is a source of secrets that can also be written.
type SecretStore interface {
	SecretReader
	// Set stores value under key, replacing any previous value.
	Set(ctx context.Context, key, value string) error
	// Delete removes key; a missing key is not an error.
	Delete(ctx context.Context, key string) error
}

// Account returns the key a provider's API key is stored under,
// "provider:NAME".
func Account(provider string) string { return "provider:" + provider }

// ServiceName returns the OS store's service name for a home directory:
// "mx-claw-" and the first 12 hex digits of sha256(home), so that profiles
// (and tests) never see each other's keys.
func ServiceName(home string) string {
	sum := sha256.Sum256([]byte(home))
	return "mx-claw-" + hex.EncodeToString(sum[:])[:12]
}

// minRedact is the shortest value Redact hides; shorter strings are not
// credentials and hiding them would garble messages.
const minRedact = 4

// Redacted is what Redact puts in place of a secret.
const Redacted = "[redacted]"

// Redact returns s with every occurrence of each secret replaced by
// Redacted. Use it on text that comes from elsewhere and may echo a key
// (a gateway's error body).
func Redact(s string, secrets ...string) string {
	for _, v := range secrets {
		if len(v) >= minRedact {
			s = strings.ReplaceAll(s, v, Redacted)
		}
	}
	return s
}

// checkValue rejects values that cannot be an API key: empty ones, and
// ones with line breaks or NUL bytes (they could not be sent in an HTTP
// header and would break line-based helpers).
func checkValue(value string) error {
	if strings.TrimSpace(value) == "" {
		return errors.New("the secret is empty")
	}
	if strings.ContainsAny(value, "\r\n\x00") {
		return errors.New("the secret contains a line break or a NUL byte")
	}
	return nil
}

// providerOf returns NAME of "provider:NAME", or "" for another key.
func providerOf(key string) string {
	name, ok := strings.CutPrefix(key, "provider:")
	if !ok {
		return ""
	}
	return name
}
