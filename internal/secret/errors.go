package secret

import "errors"

// ErrNotFound says a source holds no value for a key.
var ErrNotFound = errors.New("secret not found")

// ErrUnavailable says a store cannot be used on this machine now (no
// session bus, no Keychain, a value too long for `security -i`); the chain
// moves on to the next one.
var ErrUnavailable = errors.New("secret store unavailable")

// ErrDamaged says the encrypted file cannot be read: truncated, tampered
// with, or paired with the wrong key. The file is kept as it is.
var ErrDamaged = errors.New("secret file damaged")
