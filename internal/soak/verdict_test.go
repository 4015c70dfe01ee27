package soak

import (
	"bytes"
	"strings"
	"testing"
)

func sample(goroutines, fds int, kids int, rss, heap, idle, released int64) Sample {
	s := Sample{Goroutines: goroutines, FDs: fds, RSS: rss, Mem: MemStats{HeapInuse: heap, HeapIdle: idle, HeapReleased: released}}
	for i := range kids {
		s.Children = append(s.Children, Child{PID: 100 + i, State: 'S', Cmd: "ffmpeg -i pipe:0"})
	}
	return s
}

func TestCompare(t *testing.T) {
	const mib = 1 << 20
	base := sample(40, 20, 0, 40*mib, 8*mib, 10*mib, 4*mib) // net RSS 34 MiB
	for _, tc := range []struct {
		name  string
		after Sample
		fail  []string // names of the rows that fail
	}{
		{"same", base, nil},
		{"at every limit", sample(50, 25, 0, 0 /* set below */, 16*mib, 10*mib, 4*mib), nil},
		{"goroutine leak", sample(51, 20, 0, 40*mib, 8*mib, 10*mib, 4*mib), []string{"goroutines"}},
		{"fd leak", sample(40, 26, 0, 40*mib, 8*mib, 10*mib, 4*mib), []string{"open fds"}},
		{"child left", sample(40, 20, 1, 40*mib, 8*mib, 10*mib, 4*mib), []string{"child processes"}},
		{"heap leak", sample(40, 20, 0, 40*mib, 16*mib+1, 10*mib, 4*mib), []string{"heap in use"}},
		// Freed heap the runtime still holds is not held against the process.
		{"freed heap held", sample(40, 20, 0, 120*mib, 8*mib, 90*mib, 4*mib), nil},
		{"rss leak", sample(40, 20, 0, 40*mib+33*mib, 8*mib, 10*mib, 4*mib), []string{"net RSS"}},
		{"fewer than before", sample(10, 10, 0, 30*mib, 4*mib, 10*mib, 4*mib), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "at every limit" {
				// net RSS at exactly base + 32 MiB (34 MiB * 0.5 < 32 MiB).
				tc.after.RSS = base.NetRSS() + 32*mib + tc.after.Mem.Retained()
			}
			v := Verdict{Checks: Compare(base, nil, tc.after, DefaultLimits)}
			var failed []string
			for _, c := range v.Checks {
				if !c.OK {
					failed = append(failed, c.Name)
					if c.Reason == "" {
						t.Errorf("%s failed without a reason", c.Name)
					}
				}
			}
			if strings.Join(failed, ",") != strings.Join(tc.fail, ",") {
				t.Fatalf("failed rows %v, want %v", failed, tc.fail)
			}
			if v.OK() != (len(tc.fail) == 0) {
				t.Fatalf("OK %v with failures %v", v.OK(), failed)
			}
		})
	}
}

func TestVerdictFailuresAndTable(t *testing.T) {
	base := sample(10, 18, 0, 32<<20, 6<<20, 5<<20, 1<<20)
	loaded := sample(67, 39, 2, 40<<20, 12<<20, 6<<20, 1<<20)
	after := sample(10, 18, 1, 30<<20, 6<<20, 8<<20, 1<<20)
	v := Verdict{Checks: Compare(base, &loaded, after, DefaultLimits)}
	v.Fail("recording %s listed no file", "r1")
	if v.OK() {
		t.Fatal("want a failed verdict")
	}
	reasons := v.Reasons()
	if len(reasons) != 2 || !strings.Contains(reasons[0], "children left: 100 (S) ffmpeg -i pipe:0") || reasons[1] != "recording r1 listed no file" {
		t.Fatalf("reasons %q", reasons)
	}
	var out bytes.Buffer
	if err := v.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	table := out.String()
	for _, want := range []string{"measure", "goroutines       10        67", "child processes  0         2         1", "FAIL", "heap in use"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

func TestParseProbeDuration(t *testing.T) {
	if d, err := ParseProbeDuration([]byte("1.480000\n")); err != nil || d != 1.48 {
		t.Fatalf("got %v, %v", d, err)
	}
	for _, bad := range []string{"", "N/A\n", "abc"} {
		if _, err := ParseProbeDuration([]byte(bad)); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func TestCycleLength(t *testing.T) {
	seen := map[string]bool{}
	for i := range int64(10) {
		d := cycleLength(i)
		if d < 1e9 || d > 2e9 {
			t.Fatalf("cycle %d sends %v, want 1 to 2 s", i, d)
		}
		seen[d.String()] = true
	}
	if len(seen) != 5 {
		t.Fatalf("want 5 lengths, got %v", seen)
	}
}
