package store_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/store/storetest"
)

// TestConformance runs the store conformance suite on the SQLite store.
func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, sqliteBackend())
}

func sqliteBackend() storetest.Backend {
	return storetest.Backend{
		Open: func(t testing.TB, o storetest.Options) store.Store {
			return openSQLite(t, filepath.Join(t.TempDir(), "mx-claw.db"), o)
		},
		Another: func(t testing.TB, s store.Store, o storetest.Options) store.Store {
			return openSQLite(t, s.(*store.SQLite).Path(), o)
		},
		Exec: func(t testing.TB, s store.Store, q string) {
			t.Helper()
			if err := s.(*store.SQLite).ExecRaw(context.Background(), q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		},
		QueryString: func(t testing.TB, s store.Store, q string) string {
			t.Helper()
			v, err := s.(*store.SQLite).QueryStringRaw(context.Background(), q)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			return v
		},
	}
}

func openSQLite(t testing.TB, path string, o storetest.Options) *store.SQLite {
	t.Helper()
	opts := []store.Option{store.WithPollInterval(20 * time.Millisecond)}
	if o.Clock != nil {
		opts = append(opts, store.WithClock(o.Clock))
	}
	if o.ProcessAlive != nil {
		opts = append(opts, store.WithProcessAlive(o.ProcessAlive))
	}
	s, err := store.Open(context.Background(), path, opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}
