package secret

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/zalando/go-keyring"
)

// osStoreTimeout bounds one call to an OS store. A desktop may show an
// unlock prompt, so it is generous; a store that does not answer in time
// counts as unavailable.
const osStoreTimeout = 20 * time.Second

// SecretService stores secrets in the freedesktop Secret Service (GNOME
// Keyring, KWallet) over D-Bus, with zalando/go-keyring: no value ever
// passes through a process argument. Items carry the attributes
// service=Service and username=provider:NAME.
//
// go-keyring talks to the session bus of this process's environment
// (DBUS_SESSION_BUS_ADDRESS). Without one, the store is unavailable: it
// does not try to launch a bus (dbus-launch), which would leave a daemon
// behind.
type SecretService struct {
	// Service is the item's service attribute, ServiceName(home).
	Service string
	// Getenv reads the environment to find the session bus.
	Getenv func(string) string
}

// Name returns "secret-service".
func (s *SecretService) Name() string { return NameSecretService }

// hasBus reports whether a session bus can be found without launching one.
func (s *SecretService) hasBus() bool {
	getenv := s.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if a := getenv("DBUS_SESSION_BUS_ADDRESS"); a != "" && a != "autolaunch:" {
		return true
	}
	if dir := getenv("XDG_RUNTIME_DIR"); dir != "" {
		if fi, err := os.Stat(filepath.Join(dir, "bus")); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return true
		}
	}
	return false
}

// call runs f with a timeout; go-keyring has no context, so a call that
// does not return in time is left behind and reported unavailable.
func (s *SecretService) call(ctx context.Context, f func() error) error {
	if !s.hasBus() {
		return fmt.Errorf("no D-Bus session bus: %w", ErrUnavailable)
	}
	ctx, cancel := context.WithTimeout(ctx, osStoreTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		switch {
		case err == nil:
			return nil
		case errors.Is(err, keyring.ErrNotFound):
			return ErrNotFound
		case errors.Is(err, keyring.ErrSetDataTooBig):
			return fmt.Errorf("value too big for the Secret Service: %w", ErrUnavailable)
		}
		// The D-Bus errors name services and paths, never the value.
		return fmt.Errorf("%v: %w", err, ErrUnavailable)
	case <-ctx.Done():
		return fmt.Errorf("the Secret Service did not answer: %w", ErrUnavailable)
	}
}

// Get returns the value stored under key.
func (s *SecretService) Get(ctx context.Context, key string) (string, error) {
	var v string
	err := s.call(ctx, func() error {
		var err error
		v, err = keyring.Get(s.Service, key)
		return err
	})
	if err != nil {
		return "", err
	}
	return v, nil
}

// Set stores value under key.
func (s *SecretService) Set(ctx context.Context, key, value string) error {
	if err := checkValue(value); err != nil {
		return fmt.Errorf("store %s: %w", key, err)
	}
	return s.call(ctx, func() error { return keyring.Set(s.Service, key, value) })
}

// Delete removes key.
func (s *SecretService) Delete(ctx context.Context, key string) error {
	err := s.call(ctx, func() error { return keyring.Delete(s.Service, key) })
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}
