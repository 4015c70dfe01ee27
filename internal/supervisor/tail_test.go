package supervisor

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestLineTail(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string
		want   []string
	}{
		{"empty", nil, []string{}},
		{"split writes", []string{"boo", "m\nsec", "ond"}, []string{"boom", "second"}},
		{"carriage returns", []string{"frame=1\rframe=2\r\n\n  \nend\n"}, []string{"frame=1", "frame=2", "end"}},
		{"long line cut", []string{strings.Repeat("x", 2000) + "\n"}, []string{strings.Repeat("x", tailLineMax) + "…"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := newLineTail(quietLogger(), nil)
			for _, w := range tc.writes {
				if n, err := tl.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if got := tl.Lines(); !slices.Equal(got, tc.want) {
				t.Fatalf("lines %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLineTailKeepsTheLast(t *testing.T) {
	tl := newLineTail(quietLogger(), nil)
	for i := range 1000 {
		fmt.Fprintf(tl, "line %d\n", i)
	}
	got := tl.Lines()
	if len(got) != tailLines || got[0] != "line 980" || got[tailLines-1] != "line 999" {
		t.Fatalf("lines %q", got)
	}
}

func FuzzLineTail(f *testing.F) {
	for _, s := range []string{"", "a\nb", "\r\r\n", strings.Repeat("y", 600)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tl := newLineTail(quietLogger(), nil)
		_, _ = tl.Write([]byte(s))
		lines := tl.Lines()
		if len(lines) > tailLines {
			t.Fatalf("%d lines kept", len(lines))
		}
		for _, l := range lines {
			if len(l) > tailLineMax+len("…") || l == "" {
				t.Fatalf("line %q", l)
			}
		}
	})
}
