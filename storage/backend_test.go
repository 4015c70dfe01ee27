package storage

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/sluicemedia/sluice/internal/testutil/pgtest"
	"github.com/sluicemedia/sluice/internal/testutil/writefault"
)

// The storage tests run twice: first on SQLite, then every test that opened its store through
// NewTestTarget runs again on PostgreSQL (a throwaway cluster, one database per test). Tests that
// are about SQLite's file (permissions, a full disk, pragmas) open it by path and run once.

var (
	// testBackend is the backend of the current pass: "sqlite" or "postgres".
	testBackend = "sqlite"
	// cluster is the PostgreSQL of the second pass, started at its first use.
	cluster     *pgtest.Cluster
	clusterErr  error
	clusterOnce sync.Once
	// neutral are the top-level tests that asked for a target in the first pass.
	neutralMu sync.Mutex
	neutral   = map[string]bool{}
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && !writefault.AnyChild() {
		code = postgresPass(m)
	}
	if cluster != nil {
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = max(code, 1)
		}
	}
	os.Exit(code)
}

// postgresPass runs again, on PostgreSQL, the tests of the first pass that used NewTestTarget.
func postgresPass(m *testing.M) int {
	names := make([]string, 0, len(neutral))
	for name := range neutral {
		names = append(names, regexp.QuoteMeta(name))
	}
	if len(names) == 0 {
		return 0
	}
	sort.Strings(names)
	if err := flag.Set("test.run", "^("+strings.Join(names, "|")+")$"); err != nil {
		fmt.Fprintln(os.Stderr, "storage tests:", err)
		return 1
	}
	testBackend = "postgres"
	fmt.Printf("storage tests: %d tests again on PostgreSQL\n", len(names))
	return m.Run()
}

// PassBackend is the backend the current pass runs on: "sqlite" or "postgres".
func PassBackend() string { return testBackend }

// NewTestTarget returns a new empty store target for t on the current pass's backend: a SQLite file
// path in t's temporary folder, or the URL of a new PostgreSQL database dropped when t ends.
// Open it with OpenTarget, as often as the test needs (several handles on one database).
func NewTestTarget(t testing.TB) string {
	t.Helper()
	if testBackend == "sqlite" {
		top, _, _ := strings.Cut(t.Name(), "/")
		neutralMu.Lock()
		neutral[top] = true
		neutralMu.Unlock()
		return filepath.Join(t.TempDir(), "sluice.db")
	}
	clusterOnce.Do(func() { cluster, clusterErr = pgtest.Start(context.Background()) })
	if clusterErr != nil {
		t.Fatal(clusterErr)
	}
	return cluster.NewDatabase(t)
}

// OpenTestStore opens a new empty store on the current pass's backend, closed when t ends.
func OpenTestStore(t testing.TB) *Store {
	t.Helper()
	s, err := OpenTarget(NewTestTarget(t))
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
