//go:build linux

package secret

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ssChildVar marks the test binary running inside the D-Bus session that
// TestSecretServiceReal starts.
const ssChildVar = "MX_CLAW_SECRET_SS_CHILD"

// ssScript starts an unlocked gnome-keyring (secrets component only) in
// the private session bus, waits until it owns org.freedesktop.secrets,
// runs the test binary ($1) against it and stops the daemon again.
const ssScript = `
printf 'mx-claw-test-password' | gnome-keyring-daemon --foreground --unlock --components=secrets >/dev/null 2>&1 &
kp=$!
trap 'kill $kp 2>/dev/null; wait $kp 2>/dev/null' EXIT
i=0
until dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
	org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q true; do
	i=$((i+1))
	if [ $i -gt 150 ]; then echo "gnome-keyring-daemon did not register on the bus" >&2; exit 97; fi
	sleep 0.1
done
"$1" -test.run '^TestSecretServiceReal$' -test.count=1 -test.v
`

// TestSecretServiceReal stores, reads and deletes keys in a real Secret
// Service: a gnome-keyring-daemon in a private dbus-run-session with HOME
// and XDG_DATA_HOME in a temporary directory. The test binary re-runs
// itself inside that session; the session (bus and daemon) ends with it.
func TestSecretServiceReal(t *testing.T) {
	if os.Getenv(ssChildVar) != "" {
		secretServiceChecks(t)
		return
	}
	t.Parallel()
	for _, tool := range []string{"dbus-run-session", "dbus-send", "gnome-keyring-daemon"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("cannot start a Secret Service: %s is not installed (apt-get install gnome-keyring libsecret-tools dbus)", tool)
		}
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "dbus-run-session", "--", "sh", "-c", ssScript, "sh", os.Args[0])
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		"XDG_DATA_HOME=" + filepath.Join(dir, "data"),
		"XDG_RUNTIME_DIR=" + filepath.Join(dir, "run"),
		"TMPDIR=" + os.TempDir(),
		"LANG=C.UTF-8",
		ssChildVar + "=1",
	}
	if err := os.MkdirAll(filepath.Join(dir, "run"), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	if cmd.Process != nil {
		// Whatever of the session is left (nothing, normally) goes now.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: TestSecretServiceReal") {
		t.Fatalf("inside dbus-run-session: %v\n%s", err, out)
	}
	t.Logf("inside dbus-run-session:\n%s", out)
}

// secretServiceChecks runs inside the session.
func secretServiceChecks(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	ss := &SecretService{Service: ServiceName(home), Getenv: os.Getenv}
	const key, value = "provider:openai", "sk-secret-service-value-1"

	if _, err := ss.Get(ctx, key); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get before Set: %v, want ErrNotFound", err)
	}
	if err := ss.Set(ctx, key, value); err != nil {
		t.Fatalf("Set: %v", err)
	}
	if got, err := ss.Get(ctx, key); err != nil || got != value {
		t.Fatalf("Get = %q, %v", got, err)
	}
	// What the Go code wrote, as another client sees it.
	if _, err := exec.LookPath("secret-tool"); err == nil {
		out, err := exec.Command("secret-tool", "lookup", "service", ss.Service, "username", key).Output()
		if err != nil || string(out) != value {
			t.Errorf("secret-tool lookup: %q, %v", out, err)
		}
	} else {
		t.Log("secret-tool not installed; not cross-checking")
	}
	if err := ss.Set(ctx, key, value+"-replaced"); err != nil {
		t.Fatal(err)
	}
	if got, _ := ss.Get(ctx, key); got != value+"-replaced" {
		t.Errorf("after a second Set: %q", got)
	}
	other := &SecretService{Service: ServiceName(t.TempDir()), Getenv: os.Getenv}
	if _, err := other.Get(ctx, key); !errors.Is(err, ErrNotFound) {
		t.Errorf("another home sees the key: %v", err)
	}
	if err := ss.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := ss.Get(ctx, key); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Delete: %v", err)
	}
	if err := ss.Delete(ctx, key); err != nil {
		t.Errorf("second Delete: %v", err)
	}

	// The chain writes there, not to the file.
	c, err := New(Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	if c.Backend() != NameSecretService || !strings.Contains(c.Describe(), ss.Service) {
		t.Errorf("Backend() = %q, Describe() = %q", c.Backend(), c.Describe())
	}
	if b, err := c.Set(ctx, "deepseek", "sk-chain-value"); err != nil || b != NameSecretService {
		t.Fatalf("chain Set = %q, %v", b, err)
	}
	if v, from, err := c.Get(ctx, "deepseek"); v != "sk-chain-value" || from != NameSecretService || err != nil {
		t.Errorf("chain Get = %q from %q, %v", v, from, err)
	}
	if _, err := os.Stat(filepath.Join(home, FileName)); err == nil {
		t.Error("the chain wrote secrets.json although the Secret Service answered")
	}
	if err := c.Delete(ctx, "deepseek"); err != nil {
		t.Fatal(err)
	}
}

// TestSecretServiceWithoutBus: no session bus means unavailable at once,
// without launching one; the chain then uses the file.
func TestSecretServiceWithoutBus(t *testing.T) {
	t.Parallel()
	if os.Getenv(ssChildVar) != "" {
		return
	}
	ss := &SecretService{Service: "mx-claw-test", Getenv: fakeEnv("XDG_RUNTIME_DIR", t.TempDir())}
	start := time.Now()
	if _, err := ss.Get(context.Background(), "provider:x"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Get without a bus: %v", err)
	}
	if err := ss.Set(context.Background(), "provider:x", "v"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Set without a bus: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v", d)
	}
	c := newChain(t, Options{GOOS: "linux", Getenv: fakeEnv()})
	if c.Backend() != NameFile {
		t.Errorf("Backend() without a bus = %q", c.Backend())
	}
}
