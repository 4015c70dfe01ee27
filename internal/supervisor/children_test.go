package supervisor

import (
	"context"
	"slices"
	"testing"

	"go.uber.org/goleak"
)

// TestChildren: a program Command.Run started is listed from its start, and no longer once
// Run returned, whether it was stopped or exited by itself.
func TestChildren(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tc := range []struct {
		name string
		cmd  Command
		stop bool
	}{
		{"stopped", Command{Path: "sleep", Args: []string{"30"}}, true},
		{"exited", Command{Path: "/bin/sh", Args: []string{"-c", "exit 0"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var pid int
			var listed bool
			tc.cmd.Logger = quietLogger()
			tc.cmd.OnStart = func(p int) {
				pid, listed = p, slices.Contains(Children(), p)
				if tc.stop {
					cancel()
				}
			}
			_ = tc.cmd.Run(ctx)
			if pid == 0 {
				t.Fatal("never started")
			}
			if !listed {
				t.Errorf("pid %d not listed once started", pid)
			}
			if slices.Contains(Children(), pid) {
				t.Errorf("pid %d still listed after Run returned", pid)
			}
		})
	}
}
