package cluster

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil/pgtest"
	"github.com/sluicemedia/sluice/storage"
)

// The tests run against a real PostgreSQL: a throwaway cluster started at the first test that
// needs it, one database per test, the nodes of a test all in this process.

var (
	pg      *pgtest.Cluster
	pgErr   error
	pgOnce  sync.Once
	quietLg = slog.New(slog.NewTextHandler(io.Discard, nil))
)

func TestMain(m *testing.M) {
	code := m.Run()
	if pg != nil {
		if err := pg.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = max(code, 1)
		}
	}
	os.Exit(code)
}

// database returns the URL of a new database migrated by the store, and the store (closed when
// t ends).
func database(t *testing.T) (string, *storage.Store) {
	t.Helper()
	pgOnce.Do(func() { pg, pgErr = pgtest.Start(context.Background()) })
	if pgErr != nil {
		t.Fatal(pgErr)
	}
	url := pg.NewDatabase(t)
	st, err := storage.OpenPostgres(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	return url, st
}

// join opens node id on the database at url with a lease TTL (Renew a quarter of it), closed
// when t ends.
func join(t *testing.T, url, id string, ttl time.Duration, mod func(*Options)) *Node {
	t.Helper()
	o := Options{ID: id, APIURL: "http://" + id + ".test:8080", PublicURL: "http://" + id + ".test",
		LeaseTTL: ttl, Renew: ttl / 4, Log: quietLg}
	if mod != nil {
		mod(&o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := Open(ctx, url, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Error(err)
		}
	})
	return n
}

// pair joins nodes "a" and "b" with lease TTL ttl (b's options changed by modB, if not nil) to
// a new database holding count records, and returns them with the records' ids.
func pair(t *testing.T, ttl time.Duration, count int, modB func(*Options)) (a, b *Node, ids []string) {
	t.Helper()
	url, st := database(t)
	return join(t, url, "a", ttl, nil), join(t, url, "b", ttl, modB), records(t, st, count)
}

// records stores count active restreams and returns their ids.
func records(t *testing.T, st *storage.Store, count int) []string {
	t.Helper()
	ids := make([]string, count)
	for i := range ids {
		r := &storage.Restream{
			Base:         storage.Base{ID: storage.NewID(), Active: true},
			RestreamName: fmt.Sprintf("r%d-%s", i, storage.NewID()),
			RestreamType: "RESTREAM_TYPE_RTMP_TO_SRT",
			Output:       storage.Output{OutputType: "OUTPUT_TYPE_SRT_URL", OutputStreamURL: "srt://example.net:9000"},
		}
		if err := st.Create(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		ids[i] = r.ID
	}
	return ids
}

// timeout is a context for one step of a test.
func timeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// orphanIDs lists the ids of the orphans.
func orphanIDs(t *testing.T, n *Node) map[string]bool {
	t.Helper()
	os, err := n.Orphans(timeout(t))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, o := range os {
		out[o.ID] = true
	}
	return out
}

// acquireAll takes the leases of ids for n; any refusal fails the test.
func acquireAll(t *testing.T, n *Node, ids []string) {
	t.Helper()
	for _, id := range ids {
		if _, err := n.Acquire(timeout(t), id); err != nil {
			t.Fatal(err)
		}
	}
}
