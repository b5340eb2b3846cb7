package secret

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mx-claw/mx-claw/internal/safefile"
)

// Files of the encrypted store, inside the mx-claw home.
const (
	// FileName holds the encrypted secrets.
	FileName = "secrets.json"
	// KeyFileName holds the 32-byte AES-256 key.
	KeyFileName = "secrets.key"
	// LockFileName is flocked by writers.
	LockFileName = "secrets.lock"
)

const (
	fileVersion = 1
	ivSize      = 12
	tagSize     = 16
	keySize     = 32
)

// fileAAD binds the ciphertext to this format (GCM additional data).
const fileAAD = "mx-claw secrets v1"

// File is the fallback store: AES-256-GCM over a JSON object of all the
// secrets, in secrets.json ({"version","iv","tag","data"}, base64, plus
// "keyId" to tell a wrong key from tampering), with the random key in
// secrets.key. Both files are 0600 in a 0700 directory.
//
// Every write takes an flock on secrets.lock, reads the current file,
// changes it, encrypts it with a fresh 12-byte IV into a temporary file
// and renames that over secrets.json, so concurrent writers in several
// processes lose no update and a crash never leaves a half-written file.
// Reads take no lock. A file that cannot be decrypted is reported
// (ErrDamaged) and never replaced.
//
// This protects against keys lying in clear text on disk (backups, a
// shared config), not against a program running as the same user: whoever
// reads both files can decrypt them.
type File struct {
	// Dir is the directory of the files, the mx-claw home.
	Dir string

	// beforeRename, if set, runs after the temporary file is complete and
	// before it replaces secrets.json; an error aborts the write. Tests
	// use it to stop a write half-way, as a crash would.
	beforeRename func(tmp string) error
}

// envelope is the JSON form of secrets.json.
type envelope struct {
	Version int    `json:"version"`
	IV      string `json:"iv"`
	Tag     string `json:"tag"`
	Data    string `json:"data"`
	KeyID   string `json:"keyId,omitempty"`
}

// Name returns "file".
func (f *File) Name() string { return NameFile }

// Path returns the path of secrets.json.
func (f *File) Path() string { return filepath.Join(f.Dir, FileName) }

func (f *File) keyPath() string { return filepath.Join(f.Dir, KeyFileName) }

// Get returns the value stored under key.
func (f *File) Get(ctx context.Context, key string) (string, error) {
	_, m, err := f.load(false)
	if err != nil {
		return "", err
	}
	v, ok := m[key]
	if !ok {
		return "", ErrNotFound
	}
	return v, nil
}

// Set stores value under key.
func (f *File) Set(ctx context.Context, key, value string) error {
	if err := checkValue(value); err != nil {
		return fmt.Errorf("store %s: %w", key, err)
	}
	return f.update(func(m map[string]string) bool {
		m[key] = value
		return true
	})
}

// Delete removes key; a missing file or key is not an error.
func (f *File) Delete(ctx context.Context, key string) error {
	if _, err := os.Stat(f.Path()); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return f.update(func(m map[string]string) bool {
		if _, ok := m[key]; !ok {
			return false
		}
		delete(m, key)
		return true
	})
}

// update runs change on the current secrets under the lock and writes
// them back if it reports a change.
func (f *File) update(change func(map[string]string) bool) error {
	if err := os.MkdirAll(f.Dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", f.Dir, err)
	}
	unlock, err := lockFile(filepath.Join(f.Dir, LockFileName))
	if err != nil {
		return err
	}
	defer unlock()
	key, m, err := f.load(true)
	if err != nil {
		return err
	}
	if !change(m) {
		return nil
	}
	return f.write(key, m)
}

// load reads and decrypts secrets.json. A missing file is an empty map;
// with create, a missing key file is then created (callers hold the lock).
func (f *File) load(create bool) ([]byte, map[string]string, error) {
	data, err := safefile.ReadFile(f.Path(), safefile.DefaultMax)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("read secrets file %s: %w", f.Path(), err)
	}
	key, err := safefile.ReadFile(f.keyPath(), safefile.DefaultMax)
	switch {
	case errors.Is(err, fs.ErrNotExist) && exists:
		return nil, nil, f.damaged(fmt.Sprintf("has no key: %s is missing", f.keyPath()), "restore "+KeyFileName+" from a backup")
	case errors.Is(err, fs.ErrNotExist) && !exists:
		if !create {
			return nil, map[string]string{}, nil
		}
		if key, err = f.createKey(); err != nil {
			return nil, nil, err
		}
	case err != nil:
		return nil, nil, fmt.Errorf("read secrets key %s: %w", f.keyPath(), err)
	case len(key) != keySize:
		return nil, nil, f.damaged(fmt.Sprintf("cannot be read: %s is %d bytes, want %d", f.keyPath(), len(key), keySize), "restore "+KeyFileName+" from a backup")
	}
	if !exists {
		return key, map[string]string{}, nil
	}
	m, err := f.decrypt(data, key)
	if err != nil {
		return nil, nil, err
	}
	return key, m, nil
}

// damaged builds the error for an unreadable store: what is wrong, that
// the files were kept, and what to do.
func (f *File) damaged(what, fix string) error {
	return fmt.Errorf("secrets file %s %s; it was left unchanged: %s, or move %s and %s away and set the keys again with `mx-claw model set PROVIDER api-key`: %w",
		f.Path(), what, fix, FileName, KeyFileName, ErrDamaged)
}

// keyID names a key without revealing it.
func keyID(key []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("mx-claw secrets key id"))
	return hex.EncodeToString(mac.Sum(nil)[:8])
}

func (f *File) decrypt(data, key []byte) (map[string]string, error) {
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, f.damaged("is not valid JSON (truncated?)", "restore it from a backup")
	}
	if env.Version > fileVersion {
		return nil, fmt.Errorf("secrets file %s has version %d, newer than this mx-claw supports (%d); upgrade mx-claw", f.Path(), env.Version, fileVersion)
	}
	iv, err1 := base64.StdEncoding.DecodeString(env.IV)
	tag, err2 := base64.StdEncoding.DecodeString(env.Tag)
	ct, err3 := base64.StdEncoding.DecodeString(env.Data)
	if env.Version != fileVersion || err1 != nil || err2 != nil || err3 != nil || len(iv) != ivSize || len(tag) != tagSize {
		return nil, f.damaged("is incomplete or malformed (truncated?)", "restore it from a backup")
	}
	if env.KeyID != "" && env.KeyID != keyID(key) {
		return nil, f.damaged(fmt.Sprintf("was encrypted with another key than %s (wrong key)", f.keyPath()), "restore the matching "+KeyFileName)
	}
	gcm, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	plain, err := gcm.Open(nil, iv, append(ct, tag...), []byte(fileAAD))
	if err != nil {
		return nil, f.damaged("failed its integrity check (modified, or the wrong key)", "restore it and "+KeyFileName+" from a backup")
	}
	m := map[string]string{}
	if err := json.Unmarshal(plain, &m); err != nil {
		return nil, f.damaged("holds no valid secrets", "restore it from a backup")
	}
	return m, nil
}

func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secrets key: %w", err)
	}
	return cipher.NewGCM(block)
}

// write encrypts m with a fresh IV and replaces secrets.json atomically.
func (f *File) write(key []byte, m map[string]string) error {
	plain, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode secrets: %w", err)
	}
	gcm, err := newGCM(key)
	if err != nil {
		return err
	}
	iv := make([]byte, ivSize)
	if _, err := rand.Read(iv); err != nil {
		return fmt.Errorf("secrets IV: %w", err)
	}
	sealed := gcm.Seal(nil, iv, plain, []byte(fileAAD))
	ct, tag := sealed[:len(sealed)-tagSize], sealed[len(sealed)-tagSize:]
	data, err := json.MarshalIndent(envelope{
		Version: fileVersion,
		IV:      base64.StdEncoding.EncodeToString(iv),
		Tag:     base64.StdEncoding.EncodeToString(tag),
		Data:    base64.StdEncoding.EncodeToString(ct),
		KeyID:   keyID(key),
	}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode secrets file: %w", err)
	}
	return f.replace(f.Path(), ".secrets-*.tmp", append(data, '\n'), f.beforeRename)
}

// createKey writes a new random key to secrets.key (the caller holds the
// lock and has checked that neither file exists).
func (f *File) createKey() ([]byte, error) {
	key := make([]byte, keySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generate secrets key: %w", err)
	}
	if err := f.replace(f.keyPath(), ".secrets-key-*.tmp", key, nil); err != nil {
		return nil, err
	}
	return key, nil
}

// replace writes data to a 0600 temporary file in the directory and
// renames it over path.
func (f *File) replace(path, pattern string, data []byte, hook func(string) error) (err error) {
	tmp, err := os.CreateTemp(f.Dir, pattern)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if hook != nil {
		if err = hook(tmp.Name()); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if d, derr := os.Open(f.Dir); derr == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
