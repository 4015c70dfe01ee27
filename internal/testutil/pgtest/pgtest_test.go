package pgtest

import (
	"context"
	"database/sql"
	"os"
	"testing"
)

// TestClusterLifecycle: a cluster starts, gives two databases that are apart from each other,
// drops them, and Stop ends the server and removes its folder.
func TestClusterLifecycle(t *testing.T) {
	ctx := context.Background()
	c, err := Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dir := c.dir
	urls := [2]string{}
	drops := [2]func() error{}
	for i := range urls {
		if urls[i], drops[i], err = c.CreateDatabase(ctx); err != nil {
			t.Fatal(err)
		}
	}
	a, err := sql.Open("pgx", urls[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.ExecContext(ctx, `CREATE TABLE x (v int); INSERT INTO x VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	var loopback bool
	if err := a.QueryRowContext(ctx, `SELECT inet_server_addr() << '127.0.0.0/8'`).Scan(&loopback); err != nil || !loopback {
		t.Errorf("server address on loopback: %v, %v", loopback, err)
	}
	b, err := sql.Open("pgx", urls[1])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.ExecContext(ctx, `SELECT v FROM x`); err == nil {
		t.Error("the second database sees the first one's table")
	}
	_ = b.Close()
	// Drop ends the sessions still open on the database.
	for _, drop := range drops {
		if err := drop(); err != nil {
			t.Error(err)
		}
	}
	_ = a.Close()
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.done:
	default:
		t.Error("postgres still runs after Stop")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("cluster folder %s after Stop: %v", dir, err)
	}
}
