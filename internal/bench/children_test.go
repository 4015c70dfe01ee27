package bench

import (
	"os"
	"slices"
	"testing"
)

// TestWithChildren: the live process table holds this test's own process under its parent.
func TestWithChildren(t *testing.T) {
	got := withChildren(os.Getppid())
	if !slices.Contains(got, os.Getpid()) {
		t.Fatalf("withChildren(%d) = %v: lacks this process %d", os.Getppid(), got, os.Getpid())
	}
	if withChildren() != nil {
		t.Fatal("withChildren() of no pid is not empty")
	}
}
