package wire

import "testing"

func TestSeqArithmetic(t *testing.T) {
	cases := []struct {
		a, b uint32
		diff int32
	}{
		{5, 3, 2},
		{3, 5, -2},
		{0, SeqMask, 1},
		{SeqMask, 0, -1},
		{10, SeqMask - 9, 20},
		{1<<30 - 1, 0, 1<<30 - 1},
	}
	for _, c := range cases {
		if got := SeqDiff(c.a, c.b); got != c.diff {
			t.Errorf("SeqDiff(%d, %d) = %d, want %d", c.a, c.b, got, c.diff)
		}
		if got := SeqAdd(c.b, c.diff); got != c.a {
			t.Errorf("SeqAdd(%d, %d) = %d, want %d", c.b, c.diff, got, c.a)
		}
		if got := SeqLess(c.b, c.a); got != (c.diff > 0) {
			t.Errorf("SeqLess(%d, %d) = %v", c.b, c.a, got)
		}
	}
	if got := MsgNoNext(MsgNoMask); got != 1 {
		t.Errorf("MsgNoNext(max) = %d, want 1", got)
	}
}
