package app

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluicemedia/sluice/internal/testutil/pgtest"
)

// TestConfigStore: --store (or SLUICE_STORE) takes a PostgreSQL URL and nothing else; without it
// the store is the SQLite file in the data folder.
func TestConfigStore(t *testing.T) {
	none := func(string) string { return "" }
	c, err := ParseConfig("sluice", []string{"--data", t.TempDir()}, none, io.Discard)
	if err != nil || c.Store != "" || c.StoreTarget() != filepath.Join(c.Data, "sluice.db") {
		t.Fatalf("default store: %q, target %q, %v", c.Store, c.StoreTarget(), err)
	}
	url := "postgres://sluice:secret@127.0.0.1:5432/sluice?sslmode=disable"
	c, err = ParseConfig("sluice", nil, func(k string) string {
		if k == "SLUICE_STORE" {
			return url
		}
		return ""
	}, io.Discard)
	if err != nil || c.StoreTarget() != url {
		t.Fatalf("SLUICE_STORE: target %q, %v", c.StoreTarget(), err)
	}
	for _, bad := range []string{"sluice.db", "mysql://x/y", "file:/tmp/x.db"} {
		if _, err := ParseConfig("sluice", []string{"--store", bad}, none, io.Discard); err == nil {
			t.Errorf("--store %q accepted", bad)
		}
	}
}

// TestOpenStorePostgres: with --store the server's store is the PostgreSQL database (a real,
// throwaway one), and the data folder is still made for the recordings.
func TestOpenStorePostgres(t *testing.T) {
	t.Parallel()
	c := pgtest.StartTest(t)
	data := filepath.Join(t.TempDir(), "data")
	cfg, err := ParseConfig("sluice", []string{"--data", data, "--store", c.NewDatabase(t)}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	st, err := openStore(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.Backend() != "postgres" {
		t.Errorf("store backend %q, want postgres", st.Backend())
	}
	if err := st.SetSetting(context.Background(), "k", "v"); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := st.Setting(context.Background(), "k"); v != "v" || !ok || err != nil {
		t.Errorf("Setting = %q, %v, %v", v, ok, err)
	}
	if fi, err := os.Stat(data); err != nil || !fi.IsDir() {
		t.Errorf("data folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(data, "sluice.db")); !os.IsNotExist(err) {
		t.Errorf("a SQLite file was made beside a PostgreSQL store: %v", err)
	}
}
