package ingest

import (
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
)

type tlStep struct {
	track    int
	clock    int
	pts, dts int64
	want     Verdict
	wantDTS  int64 // after repair
	wantPTS  int64
}

var timelineCases = []struct {
	name  string
	steps []tlStep
}{
	{"monotonic", []tlStep{
		{0, 90000, 3600, 0, Keep, 0, 3600},
		{0, 90000, 7200, 3600, Keep, 3600, 7200},
		{1, 48000, 100, 100, Keep, 100, 100},
	}},
	{"equal DTS repaired", []tlStep{
		{0, 90000, 0, 0, Keep, 0, 0},
		{0, 90000, 0, 0, Keep, 1, 1},
	}},
	{"small step back repaired", []tlStep{
		{1, 48000, 48000, 48000, Keep, 48000, 48000},
		{1, 48000, 47000, 47000, Keep, 48001, 48001},
		{1, 48000, 49024, 49024, Keep, 49024, 49024},
	}},
	{"B-frame PTS kept", []tlStep{
		{0, 90000, 7200, 0, Keep, 0, 7200},
		{0, 90000, 3600, 3600, Keep, 3600, 3600},
	}},
	{"large step back restarts", []tlStep{
		{0, 90000, 900000, 900000, Keep, 900000, 900000},
		{1, 48000, 480000, 480000, Keep, 480000, 480000},
		{0, 90000, 0, 0, Restart, 0, 0},
		{1, 48000, 480960, 480960, Drop, 0, 0}, // straggler of the old timeline
		{1, 48000, 100, 100, Keep, 100, 100},
	}},
	{"large step forward restarts", []tlStep{
		{0, 90000, 0, 0, Keep, 0, 0},
		{0, 90000, 90000 * 20, 90000 * 20, Restart, 90000 * 20, 90000 * 20},
		{0, 90000, 90000*20 + 3600, 90000*20 + 3600, Keep, 90000*20 + 3600, 90000*20 + 3600},
	}},
	{"negative track dropped", []tlStep{{-1, 90000, 0, 0, Drop, 0, 0}}},
	{"constant A/V offset is no jump", []tlStep{
		{0, 90000, 900000, 900000, Keep, 900000, 900000},
		{1, 48000, 48000 * 7, 48000 * 7, Keep, 48000 * 7, 48000 * 7}, // 3 s behind the video
		{0, 90000, 903600, 903600, Keep, 903600, 903600},
		{1, 48000, 48000*7 + 1024, 48000*7 + 1024, Keep, 48000*7 + 1024, 48000*7 + 1024},
	}},
}

func TestTimeline(t *testing.T) {
	for _, tc := range timelineCases {
		var tl Timeline
		for i, st := range tc.steps {
			au := &media.AccessUnit{Track: st.track, PTS: st.pts, DTS: st.dts}
			v := tl.Check(au, st.clock)
			if v != st.want {
				t.Fatalf("%s step %d: verdict %d, want %d", tc.name, i, v, st.want)
			}
			if v != Drop && (au.DTS != st.wantDTS || au.PTS != st.wantPTS) {
				t.Fatalf("%s step %d: PTS/DTS %d/%d, want %d/%d", tc.name, i, au.PTS, au.DTS, st.wantPTS, st.wantDTS)
			}
		}
	}
}
