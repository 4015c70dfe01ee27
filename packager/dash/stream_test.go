package dash_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/packager/dash"
	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

// llFixture is a low-latency store (2 s segments, 250 ms parts) served over loopback HTTP,
// fed 8.5 s of its source: the fifth segment is in progress.
func llFixture(t *testing.T, opts dash.Options) (*segment.Store, *segment.Segmenter, *segtest.Source, *httptest.Server) {
	t.Helper()
	st := segment.NewStore(segment.StoreOptions{Window: 30 * time.Second})
	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: 2 * time.Second, PartTarget: 250 * time.Millisecond, Log: segtest.Quiet})
	src := segtest.NewSource(50, segtest.Wall)
	if err := sg.SetTracks(src.Tracks()); err != nil {
		t.Fatal(err)
	}
	opts.PartTarget, opts.FragmentSize = 250*time.Millisecond, 2*time.Second
	srv := httptest.NewServer(dash.New(st, opts))
	t.Cleanup(srv.Close)
	if err := src.Feed(sg, 8500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	return st, sg, src, srv
}

// get asks srv for the DASH file name; the caller closes the body.
func get(t *testing.T, srv *httptest.Server, name string) *http.Response {
	t.Helper()
	res, err := http.Get(srv.URL + "/hls/ll/ll/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// openName returns the DASH name of the open segment's video track and its start time.
func openName(t *testing.T, st *segment.Store) (string, int64, int64) {
	t.Helper()
	o := st.Snapshot().Open
	if o == nil || len(o.Partials) == 0 {
		t.Fatal("no open segment")
	}
	bt := o.Partials[0].Tracks[0].BaseTime
	return fmt.Sprintf("dash_%s_%d_%d_%d.m4s", st.ID(), o.Timeline.Seq, o.Partials[0].Tracks[0].Track, bt), o.Seq, bt
}

func TestStreamSegmentInProgress(t *testing.T) {
	t.Parallel()
	st, sg, src, srv := llFixture(t, dash.Options{Live: segment.Live{ID: "ll"}})
	name, seq, _ := openName(t, st)
	res := get(t, srv, name)
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || len(res.TransferEncoding) == 0 || res.TransferEncoding[0] != "chunked" {
		t.Fatalf("status %d, transfer encoding %v", res.StatusCode, res.TransferEncoding)
	}
	first := make([]byte, 8)
	if _, err := io.ReadFull(res.Body, first); err != nil {
		t.Fatal(err)
	}
	if _, done := st.Snapshot().Segment(seq); done {
		t.Fatal("segment complete before its first bytes were read")
	}
	fed := make(chan error, 1)
	go func() { fed <- src.Feed(sg, 2500*time.Millisecond) }()
	rest, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-fed; err != nil {
		t.Fatal(err)
	}
	s, ok := st.Snapshot().Segment(seq)
	if !ok {
		t.Fatal("segment never completed")
	}
	pieces, _ := s.TrackData(s.Partials[0].Tracks[0].Track)
	want, _ := io.ReadAll(segment.Concat(pieces...))
	if got := append(first, rest...); !bytes.Equal(got, want) {
		t.Fatalf("streamed %d bytes, finished segment %d bytes, not equal", len(got), len(want))
	}
}

func TestStreamCap(t *testing.T) {
	t.Parallel()
	st, _, _, srv := llFixture(t, dash.Options{Live: segment.Live{ID: "ll", MaxWaiting: 1, WaitTimeout: 2 * time.Second}})
	name, _, _ := openName(t, st)
	first := get(t, srv, name)
	defer first.Body.Close()
	second := get(t, srv, name)
	second.Body.Close()
	if second.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("second stream: status %d, want 503", second.StatusCode)
	}
	// The first one ends (aborted) at the timeout with the publisher idle.
	start := time.Now()
	_, err := io.ReadAll(first.Body)
	if err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("stream of an idle segment: %v after %v", err, time.Since(start))
	}
	// A segment two ahead is not coming: 404 at once.
	res := get(t, srv, "dash_"+st.ID()+"_0_0_99999999.m4s")
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("far segment: status %d", res.StatusCode)
	}
}
