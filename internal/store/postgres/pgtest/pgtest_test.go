package pgtest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestStartCreateStop(t *testing.T) {
	start := time.Now()
	c, err := Start(Options{})
	if err == ErrNoPostgres {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("started in %v", time.Since(start))
	ctx := context.Background()
	start = time.Now()
	url, err := c.CreateDB(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("database in %v", time.Since(start))
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	var one int
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 = %d, %v", one, err)
	}
	conn.Close(ctx)
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.Dir); !os.IsNotExist(err) {
		t.Errorf("cluster directory left behind: %v", err)
	}
	select {
	case <-c.exited:
	default:
		t.Error("server still running after Stop")
	}
}

// Debian installs the server binaries off PATH, under
// /usr/lib/postgresql/VERSION/bin: a clean machine after `make test-deps`
// has nothing on PATH, and the clusters start from there.
func TestStartFromDebianBinDir(t *testing.T) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	if len(dirs) == 0 {
		t.Skip("no /usr/lib/postgresql/*/bin here (Debian's postgresql is not installed)")
	}
	t.Setenv("PATH", t.TempDir())
	bin, err := BinDir()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(bin, "/usr/lib/postgresql/") {
		t.Fatalf("BinDir() = %s, want one under /usr/lib/postgresql", bin)
	}
	c, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
}
