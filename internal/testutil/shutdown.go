package testutil

import (
	"testing"

	"github.com/sluicemedia/sluice/internal/procfs"
)

// CheckHeldShutdown checks what a server left after a SIGTERM while clients held requests open:
// its log (logged returns the lines that contain a string) shows no process still stopping at
// the shutdown deadline and shows the HTTP shutdown held to its deadline by those requests
// (without that line the test proves nothing), and none of kids, the server's children before
// the signal, outlived it.
func CheckHeldShutdown(t testing.TB, logged func(sub string) []string, kids []int) {
	t.Helper()
	if late := logged("still stopping at the shutdown deadline"); len(late) > 0 {
		t.Errorf("processes still stopping at the deadline: %q", late)
	}
	if cut := logged("requests still running at the HTTP shutdown deadline"); len(cut) == 0 {
		t.Errorf("the hanging requests did not hold the HTTP shutdown to its deadline: the test proves nothing")
	}
	for _, pid := range kids {
		if st, err := procfs.ReadStat(pid); err == nil && !st.Zombie() {
			t.Errorf("child %d (%s) outlived the server", pid, procfs.Cmdline(pid))
		}
	}
}
