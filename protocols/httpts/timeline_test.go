package httpts

import (
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
)

type tlStep struct {
	track    int
	clock    int
	pts, dts int64
	want     verdict
	wantDTS  int64 // after repair
	wantPTS  int64
}

var timelineCases = []struct {
	name  string
	steps []tlStep
}{
	{"monotonic", []tlStep{
		{0, 90000, 3600, 0, keep, 0, 3600},
		{0, 90000, 7200, 3600, keep, 3600, 7200},
		{1, 48000, 100, 100, keep, 100, 100},
	}},
	{"equal DTS repaired", []tlStep{
		{0, 90000, 0, 0, keep, 0, 0},
		{0, 90000, 0, 0, keep, 1, 1},
	}},
	{"small step back repaired", []tlStep{
		{1, 48000, 48000, 48000, keep, 48000, 48000},
		{1, 48000, 47000, 47000, keep, 48001, 48001},
		{1, 48000, 49024, 49024, keep, 49024, 49024},
	}},
	{"B-frame PTS kept", []tlStep{
		{0, 90000, 7200, 0, keep, 0, 7200},
		{0, 90000, 3600, 3600, keep, 3600, 3600},
	}},
	{"large step back restarts", []tlStep{
		{0, 90000, 900000, 900000, keep, 900000, 900000},
		{1, 48000, 480000, 480000, keep, 480000, 480000},
		{0, 90000, 0, 0, restart, 0, 0},
		{1, 48000, 480960, 480960, drop, 0, 0}, // straggler of the old timeline
		{1, 48000, 100, 100, keep, 100, 100},
	}},
	{"large step forward restarts", []tlStep{
		{0, 90000, 0, 0, keep, 0, 0},
		{0, 90000, 90000 * 20, 90000 * 20, restart, 90000 * 20, 90000 * 20},
		{0, 90000, 90000*20 + 3600, 90000*20 + 3600, keep, 90000*20 + 3600, 90000*20 + 3600},
	}},
	{"negative track dropped", []tlStep{{-1, 90000, 0, 0, drop, 0, 0}}},
	{"constant A/V offset is no jump", []tlStep{
		{0, 90000, 900000, 900000, keep, 900000, 900000},
		{1, 48000, 48000 * 7, 48000 * 7, keep, 48000 * 7, 48000 * 7}, // 3 s behind the video
		{0, 90000, 903600, 903600, keep, 903600, 903600},
		{1, 48000, 48000*7 + 1024, 48000*7 + 1024, keep, 48000*7 + 1024, 48000*7 + 1024},
	}},
}

func TestTimeline(t *testing.T) {
	for _, tc := range timelineCases {
		var tl timeline
		for i, st := range tc.steps {
			au := &media.AccessUnit{Track: st.track, PTS: st.pts, DTS: st.dts}
			v := tl.check(au, st.clock)
			if v != st.want {
				t.Fatalf("%s step %d: verdict %d, want %d", tc.name, i, v, st.want)
			}
			if v != drop && (au.DTS != st.wantDTS || au.PTS != st.wantPTS) {
				t.Fatalf("%s step %d: PTS/DTS %d/%d, want %d/%d", tc.name, i, au.PTS, au.DTS, st.wantPTS, st.wantDTS)
			}
		}
	}
}
