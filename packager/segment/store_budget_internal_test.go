package segment

import (
	"fmt"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/budget"
)

// TestBudgetCoversAPIWindows: over the windows and fragment sizes the API allows (1 s to
// 24 h, 0.5 s to 60 s), the byte budget never evicts what the time rules keep of a 50 Mbit/s
// stream, unless MaxBytes caps it; with the default cap, a window that needs more keeps the
// newest 2 GiB. The segments' Data share one untouched buffer: the store budgets len(Data),
// which lets the test hold a day of a 50 Mbit/s stream.
func TestBudgetCoversAPIWindows(t *testing.T) {
	const rate = 50_000_000 / 8 // bytes a second
	shared := make([]byte, 60*rate)
	for _, w := range []float64{1, 60, 600, 3600, 86400} {
		for _, f := range []float64{0.5, 3, 60} {
			if w < f {
				continue // the API refuses a window shorter than its fragments
			}
			window, target := seconds(w), seconds(f)
			size := int(f * rate)
			for _, maxBytes := range []int64{math.MaxInt64, 0} {
				capName := "default cap"
				if maxBytes > 0 {
					capName = "cap raised"
				}
				t.Run(fmt.Sprintf("window %v fragments %v %s", window, target, capName), func(t *testing.T) {
					st := NewStore(StoreOptions{Window: window, Target: target, Limit: budget.Limit{MaxBytes: maxBytes}, Log: quietLog})
					// Enough segments to fill the time rules and go past them.
					n := min(int(w/f)+10, maxSegments+10)
					for i := range n {
						st.add(&Segment{Seq: int64(i), Duration: target, Data: shared[:size]})
					}
					// What the time rules alone keep.
					keep := min(3+2, n) // at least three segments, plus the grace
					if c := int(math.Ceil(w / f)); c > 3 {
						keep = min(c+2, n)
					}
					keep = min(keep, maxSegments)
					stats := st.Stats()
					need := int64(keep) * int64(size)
					switch {
					case need <= st.Budget():
						if stats.Segments != keep || stats.BudgetEvicted != 0 {
							t.Errorf("kept %d segments (%d evicted for bytes), want the %d the window needs (%d MB, budget %d MB)",
								stats.Segments, stats.BudgetEvicted, keep, need/1e6, st.Budget()/1e6)
						}
					case maxBytes == math.MaxInt64:
						t.Errorf("budget %d MB under the %d MB a 50 Mbit/s stream needs", st.Budget()/1e6, need/1e6)
					default:
						if st.Budget() != DefaultMaxStoreBytes || stats.Bytes > st.Budget() || stats.Bytes <= st.Budget()-int64(size) {
							t.Errorf("holds %d MB of a %d MB budget", stats.Bytes/1e6, st.Budget()/1e6)
						}
					}
					if newest := st.Snapshot().Newest(); newest.Seq != int64(n-1) {
						t.Errorf("newest segment %d, want %d", newest.Seq, n-1)
					}
				})
			}
		}
	}
}

var quietLog = slog.New(slog.DiscardHandler)

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
