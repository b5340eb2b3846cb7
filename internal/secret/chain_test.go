package secret

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
)

// memStore is an OS store in memory that can be switched off.
type memStore struct {
	mu      sync.Mutex
	name    string
	m       map[string]string
	down    bool
	sets    []string // keys written
	getCall int
}

func newMem() *memStore { return &memStore{name: "mem", m: map[string]string{}} }

func (s *memStore) Name() string { return s.name }

func (s *memStore) Get(ctx context.Context, key string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.getCall++
	if s.down {
		return "", ErrUnavailable
	}
	v, ok := s.m[key]
	if !ok {
		return "", ErrNotFound
	}
	return v, nil
}

func (s *memStore) Set(ctx context.Context, key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return ErrUnavailable
	}
	s.sets = append(s.sets, key)
	s.m[key] = value
	return nil
}

func (s *memStore) Delete(ctx context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return ErrUnavailable
	}
	delete(s.m, key)
	return nil
}

func keyVars(p string) []string {
	if p == "openai" {
		return []string{"OPENAI_API_KEY", "MX_CLAW_API_KEY_OPENAI"}
	}
	return []string{"MX_CLAW_API_KEY_" + strings.ToUpper(p)}
}

func newChain(t *testing.T, o Options) *Chain {
	t.Helper()
	if o.Home == "" {
		o.Home = t.TempDir()
	}
	if o.EnvVars == nil {
		o.EnvVars = keyVars
	}
	if o.Getenv == nil {
		o.Getenv = fakeEnv("PATH", os.Getenv("PATH"))
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestChainReadOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	mem := newMem()
	file := &File{Dir: home}
	mustSet(t, file, "provider:openai", "sk-from-file")
	mustSet(t, file, "provider:local", "sk-local-file")
	mem.m["provider:openai"] = "sk-from-os"
	env := fakeEnv("PATH", os.Getenv("PATH"), "OPENAI_API_KEY", "sk-from-env")

	tests := []struct {
		name       string
		command    string
		getenv     func(string) string
		osDown     bool
		provider   string
		want, from string
	}{
		{"command first", `printf 'provider:openai=sk-from-command\n'`, env, false, "openai", "sk-from-command", NameCommand},
		{"env when the command has nothing", `echo provider:other=x`, env, false, "openai", "sk-from-env", "env:OPENAI_API_KEY"},
		{"env when the command fails", `exit 3`, env, false, "openai", "sk-from-env", "env:OPENAI_API_KEY"},
		{"OS store without env", "", nil, false, "openai", "sk-from-os", "mem"},
		{"file when the OS store lacks the key", "", nil, false, "local", "sk-local-file", NameFile},
		{"file when the OS store is down", "", nil, true, "openai", "sk-from-file", NameFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMem()
			m.m = map[string]string{"provider:openai": "sk-from-os"}
			m.down = tt.osDown
			c := newChain(t, Options{Home: home, Command: tt.command, Getenv: tt.getenv, OSStore: m})
			v, from, err := c.Get(ctx, tt.provider)
			if err != nil || v != tt.want || from != tt.from {
				t.Errorf("Get = %q from %q, %v; want %q from %q", v, from, err, tt.want, tt.from)
			}
		})
	}
	c := newChain(t, Options{Home: home, OSStore: newMem()})
	if _, _, err := c.Get(ctx, "nobody"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get of an unknown provider: %v", err)
	}
}

func TestChainWriteOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("OS store first", func(t *testing.T) {
		home := t.TempDir()
		mem := newMem()
		file := &File{Dir: home}
		mustSet(t, file, "provider:a", "sk-old-in-file")
		c := newChain(t, Options{Home: home, OSStore: mem})
		if c.Backend() != "mem" {
			t.Errorf("Backend() = %q", c.Backend())
		}
		if b, err := c.Set(ctx, "a", "sk-new"); err != nil || b != "mem" {
			t.Fatalf("Set = %q, %v", b, err)
		}
		if mem.m["provider:a"] != "sk-new" {
			t.Error("the OS store does not hold the key")
		}
		if _, err := file.Get(ctx, "provider:a"); !errors.Is(err, ErrNotFound) {
			t.Errorf("the older copy in the file was kept: %v", err)
		}
		if err := c.Delete(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Get(ctx, "a"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get after Delete: %v", err)
		}
	})
	t.Run("file when the OS store is down", func(t *testing.T) {
		home := t.TempDir()
		mem := newMem()
		mem.down = true
		c := newChain(t, Options{Home: home, OSStore: mem})
		if c.Backend() != NameFile || !strings.Contains(c.Describe(), home) {
			t.Errorf("Backend() = %q, Describe() = %q", c.Backend(), c.Describe())
		}
		if b, err := c.Set(ctx, "a", "sk-file"); err != nil || b != NameFile {
			t.Fatalf("Set = %q, %v", b, err)
		}
		if v, from, err := c.Get(ctx, "a"); v != "sk-file" || from != NameFile || err != nil {
			t.Errorf("Get = %q from %q, %v", v, from, err)
		}
	})
	t.Run("file when the OS store fails on write", func(t *testing.T) {
		home := t.TempDir()
		mem := newMem()
		c := newChain(t, Options{Home: home, OSStore: mem})
		_ = c.Backend() // probed while it answered
		mem.down = true
		if b, err := c.Set(ctx, "a", "sk-file"); err != nil || b != NameFile {
			t.Fatalf("Set = %q, %v", b, err)
		}
	})
	t.Run("backend file never touches the OS store", func(t *testing.T) {
		mem := newMem()
		c := newChain(t, Options{Backend: "file", OSStore: mem})
		if b, err := c.Set(ctx, "a", "sk-file"); err != nil || b != NameFile {
			t.Fatalf("Set = %q, %v", b, err)
		}
		c.Get(ctx, "b")
		c.Delete(ctx, "a")
		if mem.getCall != 0 || len(mem.sets) != 0 {
			t.Errorf("the OS store was used: %d gets, sets %v", mem.getCall, mem.sets)
		}
	})
	t.Run("backend os refuses the file", func(t *testing.T) {
		home := t.TempDir()
		mem := newMem()
		mem.down = true
		c := newChain(t, Options{Home: home, Backend: "os", OSStore: mem})
		if _, err := c.Set(ctx, "a", "sk-x"); !errors.Is(err, ErrUnavailable) {
			t.Errorf("Set: %v", err)
		}
		if _, err := os.Stat((&File{Dir: home}).Path()); err == nil {
			t.Error("the file was written")
		}
	})
	t.Run("bad values and bad backend", func(t *testing.T) {
		c := newChain(t, Options{OSStore: newMem()})
		for _, v := range []string{"", " ", "a\nb"} {
			if _, err := c.Set(ctx, "a", v); err == nil {
				t.Errorf("Set(%q) succeeded", v)
			}
		}
		if _, err := New(Options{Home: t.TempDir(), Backend: "vault"}); err == nil || !strings.Contains(err.Error(), "MX_CLAW_SECRET_BACKEND") {
			t.Errorf("New with an unknown backend: %v", err)
		}
	})
}

// TestChainNeverWritesBackReadOnly reads keys from the command and the
// environment and checks that no store got a copy.
func TestChainNeverWritesBackReadOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	mem := newMem()
	c := newChain(t, Options{
		Home: home, OSStore: mem, Command: `echo provider:a=sk-cmd`,
		Getenv: fakeEnv("PATH", os.Getenv("PATH"), "MX_CLAW_API_KEY_B", "sk-env"),
	})
	for _, p := range []string{"a", "b"} {
		if _, _, err := c.Get(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if len(mem.sets) != 0 {
		t.Errorf("the OS store got %v", mem.sets)
	}
	if _, err := os.Stat((&File{Dir: home}).Path()); err == nil {
		t.Error("the file store was written")
	}
	if got := strings.Join(c.ReadOnlySources(), ","); got != "command,env" {
		t.Errorf("ReadOnlySources() = %s", got)
	}
	// Delete cannot remove a read-only key: it is still read.
	if err := c.Delete(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := c.Get(ctx, "b"); v != "sk-env" {
		t.Errorf("after Delete: %q", v)
	}
}

func TestServiceNameAndRedact(t *testing.T) {
	t.Parallel()
	a, b := ServiceName("/home/u/.mx-claw"), ServiceName("/tmp/other")
	if !strings.HasPrefix(a, "mx-claw-") || len(a) != len("mx-claw-")+12 || a == b {
		t.Errorf("ServiceName: %q, %q", a, b)
	}
	if ServiceName("/home/u/.mx-claw") != a {
		t.Error("ServiceName is not stable")
	}
	if Account("openai") != "provider:openai" {
		t.Error(Account("openai"))
	}
	got := Redact(`{"error":"bad key sk-12345678, really sk-12345678"}`, "sk-12345678", "")
	if strings.Contains(got, "sk-1234") || strings.Count(got, Redacted) != 2 {
		t.Errorf("Redact: %s", got)
	}
	if Redact("abc", "a") != "abc" {
		t.Error("Redact hid a one-letter string")
	}
}

func TestPlatformStore(t *testing.T) {
	t.Parallel()
	if _, ok := platformStore("linux", "s", nil).(*SecretService); !ok {
		t.Error("linux: not the Secret Service")
	}
	if _, ok := platformStore("darwin", "s", nil).(*Keychain); !ok {
		t.Error("darwin: not the Keychain")
	}
	if platformStore("windows", "s", nil) != nil {
		t.Error("windows: want the file only")
	}
}
