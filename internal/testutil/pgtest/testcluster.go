package pgtest

import (
	"context"
	"testing"
)

// StartTest starts a cluster for the test (or the suite of tests) t: it fails
// t when the cluster does not start, and stops the cluster when t ends, failing t when the stop
// does.
func StartTest(t testing.TB) *Cluster {
	t.Helper()
	c, err := Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
	})
	return c
}
