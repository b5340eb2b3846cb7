package postgres_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/store/postgres"
	"github.com/mx-claw/mx-claw/internal/store/postgres/pgtest"
	"github.com/mx-claw/mx-claw/internal/store/storetest"
)

// pg is the package's throwaway cluster, started by the first test that
// needs it and stopped when the tests end.
var pg pgtest.Lazy

func TestMain(m *testing.M) {
	code := pg.Main(m)
	pgDurable.Stop()
	os.Exit(code)
}

// postgresOpen opens the store at url.
func postgresOpen(url string) (*postgres.Store, error) {
	return postgres.Open(context.Background(), url)
}

// TestConformance runs the store conformance suite on the PostgreSQL store,
// each test on a schema of its own in a real cluster.
func TestConformance(t *testing.T) {
	t.Parallel()
	pg.Get(t)
	storetest.Run(t, pgBackend())
}

// urls remembers the URL each store was opened with.
type opened struct {
	*postgres.Store
	url string
}

func pgBackend() storetest.Backend {
	return storetest.Backend{
		Open: func(t testing.TB, o storetest.Options) store.Store {
			return openPG(t, pg.NewSchema(t), o)
		},
		Another: func(t testing.TB, s store.Store, o storetest.Options) store.Store {
			return openPG(t, s.(opened).url, o)
		},
		Exec: func(t testing.TB, s store.Store, q string) {
			t.Helper()
			conn := connect(t, s.(opened).url)
			if _, err := conn.Exec(context.Background(), q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		},
		QueryString: func(t testing.TB, s store.Store, q string) string {
			t.Helper()
			conn := connect(t, s.(opened).url)
			var v string
			if err := conn.QueryRow(context.Background(), "SELECT ("+q+")::text").Scan(&v); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			return v
		},
	}
}

func openPG(t testing.TB, url string, o storetest.Options) opened {
	t.Helper()
	var opts []postgres.Option
	if o.Clock != nil {
		opts = append(opts, postgres.WithClock(o.Clock))
	}
	if o.ProcessAlive != nil {
		opts = append(opts, postgres.WithProcessAlive(o.ProcessAlive))
	}
	s, err := postgres.Open(context.Background(), url, opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return opened{s, url}
}

func storetestOptions() storetest.Options { return storetest.Options{} }

func connect(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}
