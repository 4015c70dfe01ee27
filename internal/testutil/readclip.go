package testutil

import (
	"os"
	"testing"
)

// ReadClip returns the bytes of the clip that Clip makes once per test binary with name and
// args, for tests that send a clip themselves rather than have ffmpeg read it.
func ReadClip(t testing.TB, name string, args ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(Clip(t, name, args...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
