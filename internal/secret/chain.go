package secret

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Environment variables that configure the chain.
const (
	// CommandVar names the external secret command.
	CommandVar = "MX_CLAW_SECRET_COMMAND"
	// BackendVar chooses where keys are stored: BackendAuto (default),
	// BackendFile or BackendOS.
	BackendVar = "MX_CLAW_SECRET_BACKEND"
)

// Backend choices (BackendVar).
const (
	// BackendAuto writes to the OS store when it answers, else the file.
	BackendAuto = "auto"
	// BackendFile never touches the OS store.
	BackendFile = "file"
	// BackendOS never uses the file.
	BackendOS = "os"
)

// probeKey is looked up once to see whether the OS store answers.
const probeKey = "mx-claw:probe"

// Options configure a Chain. Home is required.
type Options struct {
	// Home is the mx-claw home: the file store's directory, and what the
	// OS store's service name is derived from.
	Home string
	// Command is the external secret command (CommandVar); "" for none.
	Command string
	// Backend is BackendAuto (or ""), BackendFile or BackendOS.
	Backend string
	// EnvVars lists a provider's key variables (config.KeyEnvVars); nil
	// reads no environment variables.
	EnvVars func(provider string) []string
	// Getenv reads the environment; os.Getenv if nil.
	Getenv func(string) string
	// GOOS picks the OS store; runtime.GOOS if empty.
	GOOS string
	// OSStore, if set, replaces the platform's OS store (tests).
	OSStore SecretStore
}

// Chain is the secret store chain of DESIGN §5. It is safe for concurrent
// use. Build one per process (app does) and share it.
type Chain struct {
	command *Command    // nil without a command
	env     *Env        // read-only
	os      SecretStore // nil when none is used
	file    *File       // nil with BackendOS
	mode    string

	mu     sync.Mutex
	probed bool
	osOK   bool
}

// FromEnv builds the chain for home from the process environment
// (CommandVar, BackendVar and the providers' key variables).
func FromEnv(home string, envVars func(provider string) []string) (*Chain, error) {
	return New(Options{
		Home:    home,
		Command: os.Getenv(CommandVar),
		Backend: os.Getenv(BackendVar),
		EnvVars: envVars,
	})
}

// New builds a chain. An unknown Backend is an error naming the choices.
func New(opts Options) (*Chain, error) {
	if opts.Home == "" {
		return nil, errors.New("secret chain: no home directory")
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	mode := strings.ToLower(strings.TrimSpace(opts.Backend))
	if mode == "" {
		mode = BackendAuto
	}
	if mode != BackendAuto && mode != BackendFile && mode != BackendOS {
		return nil, fmt.Errorf("%s=%q is not a secret backend; use %s, %s or %s", BackendVar, opts.Backend, BackendAuto, BackendFile, BackendOS)
	}
	c := &Chain{env: &Env{Vars: opts.EnvVars, Getenv: getenv}, mode: mode}
	if strings.TrimSpace(opts.Command) != "" {
		c.command = &Command{Script: opts.Command, Getenv: getenv}
	}
	if mode != BackendFile {
		c.os = opts.OSStore
		if c.os == nil {
			c.os = platformStore(opts.GOOS, ServiceName(opts.Home), getenv)
		}
	}
	if mode != BackendOS {
		c.file = &File{Dir: opts.Home}
	}
	return c, nil
}

// platformStore returns the OS store of goos, or nil (Windows and others
// use the file).
func platformStore(goos, service string, getenv func(string) string) SecretStore {
	if goos == "" {
		goos = runtime.GOOS
	}
	switch goos {
	case "linux":
		return &SecretService{Service: service, Getenv: getenv}
	case "darwin":
		return &Keychain{Service: service}
	}
	return nil
}

// osAvailable reports whether the OS store answers, asking it once.
func (c *Chain) osAvailable(ctx context.Context) bool {
	if c.os == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.probed {
		_, err := c.os.Get(ctx, probeKey)
		c.probed = true
		c.osOK = err == nil || errors.Is(err, ErrNotFound)
	}
	return c.osOK
}

// osDown records that the OS store stopped answering.
func (c *Chain) osDown() {
	c.mu.Lock()
	c.probed, c.osOK = true, false
	c.mu.Unlock()
}

// Get returns the API key of provider and where it came from: NameCommand,
// "env:VARIABLE", the OS store's name or NameFile. Without a key the error
// wraps ErrNotFound; a damaged file store is an error wrapping ErrDamaged
// that says what to do.
func (c *Chain) Get(ctx context.Context, provider string) (value, source string, err error) {
	key := Account(provider)
	if c.command != nil {
		if v, err := c.command.Get(ctx, key); err == nil {
			return v, NameCommand, nil
		}
	}
	if v, name, err := c.env.lookup(key); err == nil {
		return v, NameEnv + ":" + name, nil
	}
	if c.osAvailable(ctx) {
		v, err := c.os.Get(ctx, key)
		switch {
		case err == nil:
			return v, c.os.Name(), nil
		case errors.Is(err, ErrUnavailable):
			c.osDown()
		}
	}
	if c.file != nil {
		v, err := c.file.Get(ctx, key)
		switch {
		case err == nil:
			return v, NameFile, nil
		case !errors.Is(err, ErrNotFound):
			return "", "", fmt.Errorf("read the API key of %s: %w", provider, err)
		}
	}
	return "", "", fmt.Errorf("no API key for %s: %w", provider, ErrNotFound)
}

// Set stores provider's API key in the OS store, or in the file when the
// OS store does not answer, and returns the name of the one used. Values
// read from the command or the environment are never written by the
// chain; only what a user enters is.
func (c *Chain) Set(ctx context.Context, provider, value string) (string, error) {
	if err := checkValue(value); err != nil {
		return "", fmt.Errorf("store the API key of %s: %w", provider, err)
	}
	key := Account(provider)
	if c.osAvailable(ctx) {
		err := c.os.Set(ctx, key, value)
		if err == nil {
			if c.file != nil {
				// An older copy in the file would only confuse; reads
				// prefer the OS store anyway.
				_ = c.file.Delete(ctx, key)
			}
			return c.os.Name(), nil
		}
		if c.file == nil || !errors.Is(err, ErrUnavailable) {
			return "", fmt.Errorf("store the API key of %s in %s: %w", provider, c.os.Name(), err)
		}
		c.osDown()
	}
	if c.file == nil {
		return "", fmt.Errorf("store the API key of %s: the OS secret store does not answer and %s=%s forbids the file: %w", provider, BackendVar, BackendOS, ErrUnavailable)
	}
	if err := c.file.Set(ctx, key, value); err != nil {
		return "", fmt.Errorf("store the API key of %s: %w", provider, err)
	}
	return NameFile, nil
}

// Delete removes provider's API key from the writable stores. Keys from
// the command or the environment stay where they are.
func (c *Chain) Delete(ctx context.Context, provider string) error {
	key := Account(provider)
	var errs []error
	if c.osAvailable(ctx) {
		if err := c.os.Delete(ctx, key); err != nil && !errors.Is(err, ErrUnavailable) {
			errs = append(errs, fmt.Errorf("delete the API key of %s from %s: %w", provider, c.os.Name(), err))
		}
	}
	if c.file != nil {
		if err := c.file.Delete(ctx, key); err != nil {
			errs = append(errs, fmt.Errorf("delete the API key of %s: %w", provider, err))
		}
	}
	return errors.Join(errs...)
}

// Backend returns the name of the store keys are written to:
// NameSecretService, NameKeychain or NameFile (or "none" when
// BackendOS is set and the OS store does not answer).
func (c *Chain) Backend() string {
	ctx, cancel := context.WithTimeout(context.Background(), osStoreTimeout)
	defer cancel()
	switch {
	case c.osAvailable(ctx):
		return c.os.Name()
	case c.file != nil:
		return NameFile
	}
	return "none"
}

// Describe returns Backend with where it keeps keys, for doctor and status
// lines: "file (/home/u/.mx-claw/secrets.json)", "secret-service (service
// mx-claw-0123456789ab)".
func (c *Chain) Describe() string {
	name := c.Backend()
	switch s := c.os.(type) {
	case *SecretService:
		if name == s.Name() {
			return fmt.Sprintf("%s (service %s)", name, s.Service)
		}
	case *Keychain:
		if name == s.Name() {
			return fmt.Sprintf("%s (service %s)", name, s.Service)
		}
	}
	if name == NameFile {
		return fmt.Sprintf("%s (%s)", name, c.file.Path())
	}
	return name
}

// ReadOnlySources lists the read-only sources in reading order: NameCommand
// when a command is set, then NameEnv.
func (c *Chain) ReadOnlySources() []string {
	if c.command != nil {
		return []string{NameCommand, NameEnv}
	}
	return []string{NameEnv}
}

// getTimeout bounds a Get made without a deadline (ResolveModel has no
// context).
const getTimeout = 30 * time.Second

// GetKey is Get for callers without a context: it uses a background one
// with a generous deadline.
func (c *Chain) GetKey(provider string) (value, source string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), getTimeout)
	defer cancel()
	return c.Get(ctx, provider)
}
