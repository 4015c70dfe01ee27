package testutil

import (
	"net/http"
	"sync"
	"testing"
)

// StartRemoveAtOnce sends /api/<module>/start and /api/<module>/remove for every id at the same
// time, each id by its own pair of requests through status (which posts body to path and
// returns the HTTP status). Every remove must answer 200 and every start 200 (it came first) or
// 404 (the remove came first); what names the round in the errors. It returns how many starts
// came first.
func StartRemoveAtOnce(t testing.TB, what, module string, ids []string, status func(path string, body any) int) int {
	t.Helper()
	starts, removes := make([]int, len(ids)), make([]int, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() { starts[i] = status("/api/"+module+"/start", map[string]any{"id": id}) })
		wg.Go(func() { removes[i] = status("/api/"+module+"/remove", map[string]any{"id": id}) })
	}
	wg.Wait()
	won := 0
	for i := range ids {
		if starts[i] == http.StatusOK {
			won++
		}
		if removes[i] != http.StatusOK || (starts[i] != http.StatusOK && starts[i] != http.StatusNotFound) {
			t.Errorf("%spair %d: start %d, remove %d; want remove 200 and start 200 or 404", what, i, starts[i], removes[i])
		}
	}
	return won
}
