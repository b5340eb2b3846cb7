package pgtest

import (
	"context"
	"os"
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
