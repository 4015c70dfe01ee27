package bench

import (
	"os"
	"slices"
	"testing"
)

// TestDescendants: the roots come first, then every process below them however deep, once
// each; processes of other trees are left out.
func TestDescendants(t *testing.T) {
	ppid := map[int]int{10: 1, 11: 10, 12: 10, 13: 11, 20: 1, 21: 20, 30: 1}
	got := descendants([]int{10, 30}, ppid)
	if got[0] != 10 || got[1] != 30 {
		t.Fatalf("roots not first: %v", got)
	}
	slices.Sort(got)
	if want := []int{10, 11, 12, 13, 30}; !slices.Equal(got, want) {
		t.Fatalf("descendants %v, want %v", got, want)
	}
	if got := descendants([]int{99}, ppid); !slices.Equal(got, []int{99}) {
		t.Fatalf("a leaf: %v", got)
	}
}

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
