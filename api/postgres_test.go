package api

import (
	"testing"

	"github.com/sluicemedia/sluice/internal/testutil/pgtest"
	"github.com/sluicemedia/sluice/storage"
)

// TestContractOnPostgres holds the API to the PostgreSQL store as TestWithRealStore and
// TestStoreQueryMatchesMemory hold it to SQLite: the main flows, and every list query answered
// in the database as the API's in-memory rules answer it. One throwaway cluster, a database each.
func TestContractOnPostgres(t *testing.T) {
	c := pgtest.StartTest(t)
	open := func(t *testing.T) *storage.Store {
		st, err := storage.OpenPostgres(c.NewDatabase(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	t.Run("flows", func(t *testing.T) { withRealStore(t, open(t)) })
	t.Run("lists", func(t *testing.T) { storeQueryMatchesMemory(t, open(t)) })
}
