package supervisor

import (
	"testing"
	"time"
)

// TestCombine: the worst state wins (failed, then reconnecting, then the first not running),
// restarts add up, the newest error is kept, and Since is the first run's.
func TestCombine(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	cases := []struct {
		name string
		runs []Status
		want Status
	}{
		{"none", nil, Status{State: Running}},
		{"all running", []Status{{State: Running, Since: at(1)}, {State: Running, Since: at(2)}},
			Status{State: Running, Since: at(1)}},
		{"first not running", []Status{{State: Running, Since: at(1)}, {State: Starting, Since: at(2)}, {State: Waiting, Since: at(3)}},
			Status{State: Starting, Since: at(1)}},
		{"reconnecting over waiting", []Status{{State: Waiting, Since: at(1)}, {State: Reconnecting, Since: at(2), LastError: "dial", Restarts: 2}},
			Status{State: Reconnecting, Since: at(1), LastError: "dial", Restarts: 2}},
		{"failed over all", []Status{{State: Reconnecting, Since: at(5), LastError: "newer", Restarts: 1}, {State: Failed, Since: at(2), LastError: "older", Restarts: 3}, {State: Reconnecting, Since: at(1)}},
			Status{State: Failed, Since: at(5), LastError: "newer", Restarts: 4}},
	}
	for _, c := range cases {
		if got := Combine(c.runs); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
