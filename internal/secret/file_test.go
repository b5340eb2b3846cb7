package secret

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

func mustSet(t *testing.T, f *File, key, value string) {
	t.Helper()
	if err := f.Set(context.Background(), key, value); err != nil {
		t.Fatalf("Set(%s): %v", key, err)
	}
}

func readEnvelope(t *testing.T, f *File) envelope {
	t.Helper()
	data, err := os.ReadFile(f.Path())
	if err != nil {
		t.Fatal(err)
	}
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		t.Fatalf("secrets.json: %v", err)
	}
	return env
}

func TestFileRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "home")
	f := &File{Dir: dir}
	if _, err := f.Get(ctx, "provider:a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get before any write: %v, want ErrNotFound", err)
	}
	if _, err := os.Stat(f.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a read created secrets.json")
	}
	mustSet(t, f, "provider:a", "sk-AAAA-secret-1")
	first := readEnvelope(t, f)
	mustSet(t, f, "provider:b", "sk-BBBB-secret-2")
	mustSet(t, f, "provider:a", "sk-AAAA-secret-3")
	second := readEnvelope(t, f)

	// A second File on the same directory (another process) reads them.
	g := &File{Dir: dir}
	for key, want := range map[string]string{"provider:a": "sk-AAAA-secret-3", "provider:b": "sk-BBBB-secret-2"} {
		if got, err := g.Get(ctx, key); err != nil || got != want {
			t.Errorf("Get(%s) = %q, %v; want %q", key, got, err, want)
		}
	}
	if err := g.Delete(ctx, "provider:b"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Get(ctx, "provider:b"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Delete: %v", err)
	}
	if err := g.Delete(ctx, "provider:nope"); err != nil {
		t.Errorf("Delete of a missing key: %v", err)
	}

	// Format: version, base64 iv (12 bytes) and tag (16), a fresh IV per
	// write, nothing in clear.
	if second.Version != 1 || second.Data == "" {
		t.Errorf("envelope %+v", second)
	}
	iv, _ := base64.StdEncoding.DecodeString(second.IV)
	tag, _ := base64.StdEncoding.DecodeString(second.Tag)
	if len(iv) != 12 || len(tag) != 16 {
		t.Errorf("iv %d bytes, tag %d bytes; want 12 and 16", len(iv), len(tag))
	}
	if first.IV == second.IV {
		t.Error("two writes used the same IV")
	}
	raw, _ := os.ReadFile(f.Path())
	if bytes.Contains(raw, []byte("sk-")) || bytes.Contains(raw, []byte("provider:")) {
		t.Errorf("secrets.json holds clear text: %s", raw)
	}
	key, _ := os.ReadFile(filepath.Join(dir, KeyFileName))
	if len(key) != 32 {
		t.Errorf("secrets.key is %d bytes", len(key))
	}
	for _, name := range []string{FileName, KeyFileName} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, %v; want 0600", name, fi.Mode().Perm(), err)
		}
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("home dir mode %v, want 0700", fi.Mode().Perm())
	}
	if err := f.Set(ctx, "provider:c", "two\nlines"); err == nil {
		t.Error("a value with a line break was stored")
	}
	if err := f.Set(ctx, "provider:c", "  "); err == nil {
		t.Error("an empty value was stored")
	}
}

// damage sets up a store holding one key and breaks it with f.
func damage(t *testing.T, breakIt func(t *testing.T, dir string)) (*File, []byte) {
	t.Helper()
	dir := t.TempDir()
	f := &File{Dir: dir}
	mustSet(t, f, "provider:a", "sk-original-value")
	breakIt(t, dir)
	before, _ := os.ReadFile(f.Path())
	return f, before
}

func TestFileDamageIsReportedNeverReplaced(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		breakIt func(t *testing.T, dir string)
		want    string
	}{
		{"tampered ciphertext", func(t *testing.T, dir string) {
			p := filepath.Join(dir, FileName)
			var env envelope
			data, _ := os.ReadFile(p)
			json.Unmarshal(data, &env)
			ct, _ := base64.StdEncoding.DecodeString(env.Data)
			ct[0] ^= 1
			env.Data = base64.StdEncoding.EncodeToString(ct)
			data, _ = json.Marshal(env)
			os.WriteFile(p, data, 0o600)
		}, "failed its integrity check"},
		{"tampered tag", func(t *testing.T, dir string) {
			p := filepath.Join(dir, FileName)
			var env envelope
			data, _ := os.ReadFile(p)
			json.Unmarshal(data, &env)
			tag, _ := base64.StdEncoding.DecodeString(env.Tag)
			tag[15] ^= 0x80
			env.Tag = base64.StdEncoding.EncodeToString(tag)
			data, _ = json.Marshal(env)
			os.WriteFile(p, data, 0o600)
		}, "failed its integrity check"},
		{"wrong key", func(t *testing.T, dir string) {
			k := make([]byte, 32)
			rand.Read(k)
			os.WriteFile(filepath.Join(dir, KeyFileName), k, 0o600)
		}, "wrong key"},
		{"wrong key without key id", func(t *testing.T, dir string) {
			p := filepath.Join(dir, FileName)
			var env envelope
			data, _ := os.ReadFile(p)
			json.Unmarshal(data, &env)
			env.KeyID = ""
			data, _ = json.Marshal(env)
			os.WriteFile(p, data, 0o600)
			k := make([]byte, 32)
			rand.Read(k)
			os.WriteFile(filepath.Join(dir, KeyFileName), k, 0o600)
		}, "failed its integrity check"},
		{"truncated file", func(t *testing.T, dir string) {
			p := filepath.Join(dir, FileName)
			data, _ := os.ReadFile(p)
			os.WriteFile(p, data[:len(data)/2], 0o600)
		}, "not valid JSON"},
		{"truncated data field", func(t *testing.T, dir string) {
			p := filepath.Join(dir, FileName)
			var env envelope
			data, _ := os.ReadFile(p)
			json.Unmarshal(data, &env)
			env.IV = env.IV[:8]
			data, _ = json.Marshal(env)
			os.WriteFile(p, data, 0o600)
		}, "incomplete or malformed"},
		{"empty file", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, FileName), nil, 0o600)
		}, "not valid JSON"},
		{"missing key file", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, KeyFileName))
		}, "secrets.key is missing"},
		{"short key file", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, KeyFileName), []byte("short"), 0o600)
		}, "is 5 bytes, want 32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f, before := damage(t, tt.breakIt)
			_, err := f.Get(ctx, "provider:a")
			if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Get: %v; want ErrDamaged saying %q", err, tt.want)
			}
			msg := err.Error()
			for _, want := range []string{f.Path(), "left unchanged", "mx-claw model set"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if strings.Contains(msg, "sk-original-value") {
				t.Error("the error shows the secret")
			}
			// Writes refuse too, and the file is kept byte for byte.
			if err := f.Set(ctx, "provider:b", "sk-new"); !errors.Is(err, ErrDamaged) {
				t.Errorf("Set on a damaged store: %v", err)
			}
			if err := f.Delete(ctx, "provider:a"); !errors.Is(err, ErrDamaged) {
				t.Errorf("Delete on a damaged store: %v", err)
			}
			after, _ := os.ReadFile(f.Path())
			if !bytes.Equal(before, after) {
				t.Error("the damaged file was replaced")
			}
		})
	}
}

func TestFileNewerVersion(t *testing.T) {
	t.Parallel()
	f, _ := damage(t, func(t *testing.T, dir string) {
		os.WriteFile(filepath.Join(dir, FileName), []byte(`{"version":2,"iv":"","tag":"","data":""}`), 0o600)
	})
	_, err := f.Get(context.Background(), "provider:a")
	if err == nil || !strings.Contains(err.Error(), "upgrade mx-claw") {
		t.Fatalf("Get: %v", err)
	}
}

// TestFileConcurrentProcesses runs two processes that each add their own
// keys to one store at the same time: the flock makes every
// read-modify-write whole, so no update is lost and the file stays valid.
func TestFileConcurrentProcesses(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no flock on Windows: concurrent writers may lose an update there")
	}
	dir := t.TempDir()
	const n = 30
	var wg sync.WaitGroup
	errs := make([]error, 2)
	outs := make([][]byte, 2)
	for i, prefix := range []string{"a", "b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := helper("writer", "HELPER_DIR="+dir, "HELPER_PREFIX="+prefix, fmt.Sprintf("HELPER_N=%d", n))
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i := range errs {
		if errs[i] != nil {
			t.Fatalf("writer %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	f := &File{Dir: dir}
	ctx := context.Background()
	for _, prefix := range []string{"a", "b"} {
		for i := range n {
			key := fmt.Sprintf("provider:%s-%d", prefix, i)
			if got, err := f.Get(ctx, key); err != nil || got != "value-of-"+key {
				t.Errorf("%s = %q, %v after concurrent writes", key, got, err)
			}
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".secrets-*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestFileCrashBeforeRename kills a writer after it wrote its temporary
// file and before the rename: the store keeps its previous content, the
// stray temporary file harms nothing, and the next write works.
func TestFileCrashBeforeRename(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	f := &File{Dir: dir}
	mustSet(t, f, "provider:a", "sk-before-crash")
	before, _ := os.ReadFile(f.Path())

	out, err := helper("crash", "HELPER_DIR="+dir).CombinedOutput()
	var ee interface{ ExitCode() int }
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("crash helper: %v\n%s", err, out)
	}
	stray, _ := filepath.Glob(filepath.Join(dir, ".secrets-*.tmp"))
	if len(stray) != 1 {
		t.Fatalf("want the crashed writer's temporary file, found %v", stray)
	}
	after, _ := os.ReadFile(f.Path())
	if !bytes.Equal(before, after) {
		t.Fatal("secrets.json changed although the writer died before the rename")
	}
	if got, err := f.Get(ctx, "provider:a"); err != nil || got != "sk-before-crash" {
		t.Fatalf("after the crash: %q, %v", got, err)
	}
	if _, err := f.Get(ctx, "provider:crash"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the crashed write is visible: %v", err)
	}
	mustSet(t, f, "provider:b", "sk-after-crash")
	if got, err := f.Get(ctx, "provider:a"); err != nil || got != "sk-before-crash" {
		t.Errorf("after the next write: %q, %v", got, err)
	}

	// The same in-process: a failing step before the rename leaves the
	// file as it was and removes its temporary file.
	f.beforeRename = func(string) error { return errors.New("disk full") }
	err = f.Set(ctx, "provider:a", "sk-lost")
	if err == nil || !strings.Contains(err.Error(), "disk full") || strings.Contains(err.Error(), "sk-lost") {
		t.Fatalf("Set with a failing rename step: %v", err)
	}
	f.beforeRename = nil
	if got, _ := f.Get(ctx, "provider:a"); got != "sk-before-crash" {
		t.Errorf("a failed write changed the value to %q", got)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".secrets-*.tmp")); len(left) != 1 {
		t.Errorf("temporary files after a failed write: %v (want only the crashed one)", left)
	}
}
