package dash

import (
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

// BenchmarkManifest measures rendering the MPD of 30 segments (video and audio) into a reused
// buffer.
func BenchmarkManifest(b *testing.B) {
	st := segtest.BenchStore(b)
	h := New(st, Options{Live: segment.Live{Window: time.Minute}})
	segtest.BenchManifest(b, st.Snapshot(), func(buf []byte, win *segment.Window) []byte {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.appendMPD(buf, win, "http://127.0.0.1/hls/p/p/time")
	})
}

// BenchmarkServeSegment measures a DASH segment request (header and shared bytes joined).
func BenchmarkServeSegment(b *testing.B) {
	st := segtest.BenchStore(b)
	h := New(st, Options{Live: segment.Live{Window: time.Minute}})
	s := st.Snapshot().Newest()
	p, _ := s.Part(0)
	name := "/dash_" + st.ID() + "_" + itoa(s.Timeline.Seq) + "_0_" + itoa(p.BaseTime) + ".m4s"
	req := httptest.NewRequest("GET", name, nil)
	b.ReportAllocs()
	b.SetBytes(int64(p.Size()))
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
