package soak

import (
	"bytes"
	"runtime"
	"runtime/pprof"
	"testing"
)

// TestParseRealProfiles parses profiles this runtime writes, in the format the server's
// /debug/pprof handlers serve with debug=1.
func TestParseRealProfiles(t *testing.T) {
	n, err := ParseGoroutineTotal(profile(t, "goroutine"))
	if err != nil {
		t.Fatal(err)
	}
	if now := runtime.NumGoroutine(); n < 2 || n > now+5 {
		t.Fatalf("goroutines %d, runtime says %d", n, now)
	}

	runtime.GC()
	m, err := ParseMemStats(profile(t, "heap"))
	if err != nil {
		t.Fatal(err)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if m.HeapInuse <= 0 || m.Sys < m.HeapInuse || m.HeapIdle < m.HeapReleased {
		t.Fatalf("implausible %+v", m)
	}
	if m.Sys > int64(ms.Sys)*2 || int64(ms.Sys) > m.Sys*2 {
		t.Fatalf("Sys %d, runtime says %d", m.Sys, ms.Sys)
	}
}

// profile returns this runtime's profile name as /debug/pprof serves it with debug=1.
func profile(t *testing.T, name string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := pprof.Lookup(name).WriteTo(&b, 1); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestParseProfileErrors(t *testing.T) {
	for _, bad := range []string{"", "heap profile: 1: 2 [3: 4] @ heap/1048576\n", "goroutine profile: total x\n"} {
		if _, err := ParseGoroutineTotal([]byte(bad)); err == nil {
			t.Errorf("goroutines %q: want an error", bad)
		}
	}
	if n, err := ParseGoroutineTotal([]byte("goroutine profile: total 37\n1 @ 0x1\n")); err != nil || n != 37 {
		t.Errorf("got %d, %v; want 37", n, err)
	}
	partial := "# HeapInuse = 10\n# HeapIdle = 5\n# Sys = 100\n"
	if _, err := ParseMemStats([]byte(partial)); err == nil {
		t.Error("missing HeapReleased: want an error")
	}
	if _, err := ParseMemStats([]byte(partial + "# HeapReleased = x\n")); err == nil {
		t.Error("bad HeapReleased: want an error")
	}
	m, err := ParseMemStats([]byte(partial + "# HeapReleased = 2\n# Stack = 1 / 2\n"))
	if err != nil || m != (MemStats{HeapInuse: 10, HeapIdle: 5, HeapReleased: 2, Sys: 100}) || m.Retained() != 3 {
		t.Errorf("got %+v, %v", m, err)
	}
}
