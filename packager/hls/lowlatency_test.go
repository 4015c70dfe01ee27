package hls_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/packager/hls"
	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

const partTarget = 333 * time.Millisecond

// newLowLatencyFixture is a low-latency player over a synthetic source: 25 fps, 1 s GOP, 1 s
// segments, 333 ms parts.
func newLowLatencyFixture(t testing.TB, opts hls.Options) *fixture {
	t.Helper()
	opts.PartTarget, opts.FragmentSize = partTarget, time.Second
	return newFixtureWith(t, opts, segtest.FixtureOptions{Window: opts.Window, Wall: segtest.Wall, Now: segtest.Wall, Base: "/hls/p1/p1/",
		Target: time.Second, PartTarget: partTarget, Rate: 25})
}

// feedToParts feeds f d of its source, then unit by unit until the segment in progress has n
// parts.
func feedToParts(t *testing.T, f *fixture, d time.Duration, n int) {
	t.Helper()
	f.Feed(t, d)
	f.FeedUntil(t, func(w *segment.Window) bool { return w.Open != nil && len(w.Open.Partials) == n })
}

// newPartsFixture is a low-latency fixture with a 10 s window and blockTimeout, fed 4 s and
// then until the segment in progress has n parts; it returns that segment's sequence number.
func newPartsFixture(t *testing.T, blockTimeout time.Duration, n int) (*fixture, int64) {
	t.Helper()
	f := newLowLatencyFixture(t, hls.Options{Live: segment.Live{ID: "p1", Window: 10 * time.Second, WaitTimeout: blockTimeout}})
	feedToParts(t, f, 4*time.Second, n)
	return f, f.Store.Snapshot().Open.Seq
}

// getBlocked asks for name in the background and waits (at most 10 s) until the handler counts
// the request blocked. The channel receives the answer's body, or "status N body" for an answer
// other than 200 OK.
func getBlocked(t *testing.T, f *fixture, name string) <-chan string {
	t.Helper()
	done := make(chan string, 1)
	go func() {
		res, body := f.Get(t, http.MethodGet, name)
		if res.StatusCode != http.StatusOK {
			body = "status " + strconv.Itoa(res.StatusCode) + " " + body
		}
		done <- body
	}()
	deadline := time.Now().Add(10 * time.Second)
	for f.H.Blocked() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not blocked", name)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return done
}

// attr returns the value of attribute name in a tag line (quotes removed).
func attr(line, name string) string {
	_, rest, ok := strings.Cut(line, ":")
	if !ok {
		return ""
	}
	for _, kv := range strings.Split(rest, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

func secondsOf(t *testing.T, s string) time.Duration {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("not seconds: %q", s)
	}
	return time.Duration(v * float64(time.Second))
}

// partName is the file name of a partial segment.
func partName(st *segment.Store, seq int64, i int) string {
	return "part_" + st.ID() + "_" + strconv.FormatInt(seq, 10) + "_" + strconv.Itoa(i) + ".m4s"
}

// TestLowLatencyPlaylistRules checks the rules of RFC 8216bis and Apple's LL-HLS that can be
// checked offline on the playlist and the files it names: version, PART-TARGET, every part no
// longer than it, PART-HOLD-BACK at least three part targets, blocking reload advertised,
// parts listed for the last segments and the one in progress, INDEPENDENT on the parts that
// start with a key frame, the preload hint naming the next part, each part's bytes a slice of
// its segment's and each listed segment the concatenation of its listed parts.
func TestLowLatencyPlaylistRules(t *testing.T) {
	t.Parallel()
	f := newLowLatencyFixture(t, hls.Options{Live: segment.Live{ID: "p1", Window: 10 * time.Second}})
	feedToParts(t, f, 12*time.Second, 2)
	win := f.Store.Snapshot()
	body := f.GetOK(t, "index.m3u8")

	if v := lines(body, "#EXT-X-VERSION:"); len(v) != 1 || v[0] != "#EXT-X-VERSION:9" {
		t.Errorf("version %v", v)
	}
	inf := lines(body, "#EXT-X-PART-INF:")
	sc := lines(body, "#EXT-X-SERVER-CONTROL:")
	if len(inf) != 1 || len(sc) != 1 {
		t.Fatalf("PART-INF %v SERVER-CONTROL %v in\n%s", inf, sc, body)
	}
	// The part target cut down to whole frames: 8 of the source's 40 ms within 333 ms.
	target := secondsOf(t, attr(inf[0], "PART-TARGET"))
	if want := 320 * time.Millisecond; target != want || target > partTarget {
		t.Errorf("PART-TARGET %v, want %v", target, want)
	}
	if attr(sc[0], "CAN-BLOCK-RELOAD") != "YES" {
		t.Errorf("server control %s", sc[0])
	}
	if hb := secondsOf(t, attr(sc[0], "PART-HOLD-BACK")); hb < 3*target {
		t.Errorf("PART-HOLD-BACK %v < 3 × %v", hb, target)
	}
	if len(lines(body, "#EXT-X-START")) != 0 {
		t.Error("EXT-X-START in a low-latency playlist")
	}

	// Walk the segment lines: parts come before the segment they belong to.
	var pending []string // part URIs since the last segment
	partsBySeg := map[string][]string{}
	var segURIs []string
	independent := 0
	for _, l := range strings.Split(strings.TrimSpace(body), "\n") {
		switch {
		case strings.HasPrefix(l, "#EXT-X-PART:"):
			if d := secondsOf(t, attr(l, "DURATION")); d > target || d <= 0 {
				t.Errorf("part longer than PART-TARGET %v: %s", target, l)
			}
			if attr(l, "INDEPENDENT") == "YES" {
				independent++
			}
			pending = append(pending, attr(l, "URI"))
		case strings.HasPrefix(l, "seg_"):
			partsBySeg[l] = pending
			segURIs = append(segURIs, l)
			pending = nil
		}
	}
	open := win.Open
	if len(pending) != len(open.Partials) || len(pending) != 2 {
		t.Fatalf("%d parts listed after the last segment, %d in progress", len(pending), len(open.Partials))
	}
	// Parts are listed for the segments that end within three target durations (3 s) of the
	// live edge (the last three here), not for older ones.
	for i, u := range segURIs {
		if want := map[bool]int{true: 4, false: 0}[i >= len(segURIs)-3]; len(partsBySeg[u]) != want {
			t.Errorf("%s: %d parts listed, want %d", u, len(partsBySeg[u]), want)
		}
	}
	withParts := 1 // the segment in progress
	for _, u := range segURIs {
		if len(partsBySeg[u]) > 0 {
			withParts++
		}
	}
	if independent != withParts {
		t.Errorf("%d independent parts for %d segments with parts", independent, withParts)
	}
	hint := lines(body, "#EXT-X-PRELOAD-HINT:")
	if len(hint) != 1 || attr(hint[0], "TYPE") != "PART" || attr(hint[0], "URI") != partName(f.Store, open.Seq, 2) {
		t.Errorf("preload hint %v, want part 2 of segment %d", hint, open.Seq)
	}

	// Files: parts are served and a segment is its parts joined.
	for _, u := range segURIs {
		if len(partsBySeg[u]) == 0 {
			continue
		}
		res, whole := f.Get(t, http.MethodGet, u)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", u, res.StatusCode)
		}
		var joined string
		for _, p := range partsBySeg[u] {
			res, data := f.Get(t, http.MethodGet, p)
			if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "video/mp4" {
				t.Fatalf("%s: %d %v", p, res.StatusCode, res.Header)
			}
			joined += data
		}
		if joined != whole {
			t.Errorf("%s: parts join to %d bytes, segment %d", u, len(joined), len(whole))
		}
	}
	for i, p := range pending {
		res, data := f.Get(t, http.MethodGet, p)
		if res.StatusCode != http.StatusOK || data != string(open.Data[open.Partials[i].Start:open.Partials[i].End]) {
			t.Errorf("%s (in progress): %d, %d bytes", p, res.StatusCode, len(data))
		}
	}
}

// TestLowLatencyBlockingReload: _HLS_msn/_HLS_part requests wait until that part exists and
// are answered with the playlist of that moment (the part listed, the hint naming the next);
// a part of a later segment is answered once that segment starts; malformed or too far
// ahead is 400 at once; a timeout is 503.
func TestLowLatencyBlockingReload(t *testing.T) {
	t.Parallel()
	f, seq := newPartsFixture(t, 30*time.Second, 1)

	for _, tc := range []struct{ want, query string }{
		{partName(f.Store, seq, 1), "_HLS_msn=" + itoa(seq) + "&_HLS_part=1"},
		{partName(f.Store, seq+1, 0), "_HLS_msn=" + itoa(seq+1) + "&_HLS_part=0"},
	} {
		done := getBlocked(t, f, "index.m3u8?"+tc.query)
		select {
		case body := <-done:
			t.Fatalf("%s answered before the part exists:\n%s", tc.query, body)
		case <-time.After(50 * time.Millisecond):
		}
		// Feed unit by unit until the part exists, then no more.
		f.FeedUntil(t, func(w *segment.Window) bool {
			want := tc.want
			for _, s := range append(append([]*segment.Segment{}, w.Segments...), w.Open) {
				if s == nil {
					continue
				}
				for _, p := range s.Partials {
					if partName(f.Store, s.Seq, p.Index) == want {
						return true
					}
				}
			}
			return false
		})
		var body string
		select {
		case body = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: not answered once the part exists", tc.query)
		}
		uris := lines(body, "#EXT-X-PART:")
		if len(uris) == 0 || attr(uris[len(uris)-1], "URI") != tc.want {
			t.Fatalf("%s: last part listed %v, want %s:\n%s", tc.query, uris[len(uris)-1:], tc.want, body)
		}
		win := f.Store.Snapshot()
		ns, ni := win.Open.Seq, len(win.Open.Partials)
		if hint := lines(body, "#EXT-X-PRELOAD-HINT:"); len(hint) != 1 || attr(hint[0], "URI") != partName(f.Store, ns, ni) {
			t.Errorf("%s: hint %v, want %s", tc.query, hint, partName(f.Store, ns, ni))
		}
	}

	// Parts and segments that exist are answered at once.
	start := time.Now()
	if res, body := f.Get(t, http.MethodGet, "index.m3u8?_HLS_msn="+itoa(seq)+"&_HLS_part=9"); res.StatusCode != http.StatusOK {
		t.Errorf("a complete segment's part: %d %s", res.StatusCode, body)
	}
	newest := f.Store.Snapshot().Newest().Seq
	for _, q := range []string{
		"_HLS_part=1",                                  // without _HLS_msn
		"_HLS_msn=x&_HLS_part=1",                       // not a number
		"_HLS_msn=1&_HLS_part=-1",                      // negative
		"_HLS_msn=" + itoa(newest+3),                   // more than two segments ahead
		"_HLS_msn=" + itoa(newest+1) + "&_HLS_part=30", // more than the advance part limit
		"_HLS_msn=" + itoa(newest+2) + "&_HLS_part=30", // the same, in the segment after the open one
		"_HLS_msn=1&_HLS_part=99999999999999",
	} {
		if res, body := f.Get(t, http.MethodGet, "index.m3u8?"+q); res.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d %s", q, res.StatusCode, body)
		}
	}
	if time.Since(start) > 5*time.Second || f.H.Blocked() != 0 {
		t.Errorf("answers took %v, %d blocked", time.Since(start), f.H.Blocked())
	}

	// Timeout: 503.
	g := newLowLatencyFixture(t, hls.Options{Live: segment.Live{ID: "p1", Window: 10 * time.Second, WaitTimeout: 200 * time.Millisecond}})
	g.Feed(t, 3500*time.Millisecond)
	o := g.Store.Snapshot().Open
	res, body := g.Get(t, http.MethodGet, "index.m3u8?_HLS_msn="+itoa(o.Seq)+"&_HLS_part="+strconv.Itoa(len(o.Partials)))
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
		t.Errorf("timeout: %d %s", res.StatusCode, body)
	}
}

// TestLowLatencyPreload: a request for the hinted part waits until it exists and then gets
// its bytes; a part that will not be made soon is 404 at once; waiting requests count
// against MaxWaiting, the one over it 503 at once; the classic handler serves no part.
func TestLowLatencyPreload(t *testing.T) {
	t.Parallel()
	f := newLowLatencyFixture(t, hls.Options{Live: segment.Live{ID: "p1", Window: 10 * time.Second, MaxWaiting: 1, WaitTimeout: 30 * time.Second}})
	feedToParts(t, f, 3*time.Second, 1)
	o := f.Store.Snapshot().Open
	hint := attr(lines(f.GetOK(t, "index.m3u8"), "#EXT-X-PRELOAD-HINT:")[0], "URI")
	if hint != partName(f.Store, o.Seq, 1) {
		t.Fatalf("hint %s", hint)
	}
	done := getBlocked(t, f, hint)
	if res, body := f.Get(t, http.MethodGet, partName(f.Store, o.Seq, 2)); res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("over the cap: %d %s", res.StatusCode, body)
	}
	f.FeedUntil(t, func(w *segment.Window) bool { _, _, ok := w.Partial(o.Seq, 1); return ok })
	select {
	case body := <-done:
		s, p, _ := f.Store.Snapshot().Partial(o.Seq, 1)
		if body != string(s.PartialData(p)) {
			t.Errorf("preloaded part: %d bytes, want %d", len(body), p.End-p.Start)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("preload not answered")
	}
	for _, name := range []string{
		partName(f.Store, o.Seq+3, 0), partName(f.Store, o.Seq, 50), partName(f.Store, 0, 0) + "x",
		"part_other_1_0.m4s", "part_" + f.Store.ID() + "_1.m4s",
	} {
		start := time.Now()
		if res, _ := f.Get(t, http.MethodGet, name); res.StatusCode != http.StatusNotFound || time.Since(start) > 5*time.Second {
			t.Errorf("%s: %d after %v", name, res.StatusCode, time.Since(start))
		}
	}
	if f.H.Blocked() != 0 || !f.H.Owns("part_x") {
		t.Errorf("blocked %d", f.H.Blocked())
	}
	// A classic handler over the same store serves no part.
	classic := hls.New(f.Store, hls.Options{Live: segment.Live{ID: "p1"}})
	c := &fixture{Fixture: &segtest.Fixture{Store: f.Store, Handler: classic, Base: f.Base}, H: classic}
	if res, _ := c.Get(t, http.MethodGet, partName(f.Store, o.Seq, 0)); res.StatusCode != http.StatusNotFound {
		t.Errorf("classic handler serves a part: %d", res.StatusCode)
	}
}

// TestLowLatencyDeltaUpdate: a delta update (_HLS_skip=YES) is the full playlist with the
// lines of the segments more than CAN-SKIP-UNTIL from the end replaced by EXT-X-SKIP.
func TestLowLatencyDeltaUpdate(t *testing.T) {
	t.Parallel()
	f := newLowLatencyFixture(t, hls.Options{Live: segment.Live{ID: "p1", Window: 20 * time.Second}})
	feedToParts(t, f, 25*time.Second, 2)
	full := f.GetOK(t, "index.m3u8")
	_, delta := f.Get(t, http.MethodGet, "index.m3u8?_HLS_skip=YES")
	sc := lines(full, "#EXT-X-SERVER-CONTROL:")[0]
	until := secondsOf(t, attr(sc, "CAN-SKIP-UNTIL"))
	td := secondsOf(t, strings.TrimPrefix(lines(full, "#EXT-X-TARGETDURATION:")[0], "#EXT-X-TARGETDURATION:"))
	if until < 6*td {
		t.Errorf("CAN-SKIP-UNTIL %v < 6 target durations (%v)", until, td)
	}
	skip := lines(delta, "#EXT-X-SKIP:")
	if len(skip) != 1 {
		t.Fatalf("delta update without one EXT-X-SKIP:\n%s", delta)
	}
	n, _ := strconv.Atoi(attr(skip[0], "SKIPPED-SEGMENTS"))
	// Rebuild: the header lines of the full playlist, the skip tag, then what follows the
	// n-th segment's URI.
	fl := strings.Split(full, "\n")
	head := 0
	for !strings.HasPrefix(fl[head], "#EXT-X-MAP") {
		head++
	}
	end, segs := head, 0
	for segs < n {
		if strings.HasPrefix(fl[end], "seg_") {
			segs++
		}
		end++
	}
	want := strings.Join(fl[:head], "\n") + "\n" + skip[0] + "\n" + strings.Join(fl[end:], "\n")
	if delta != want {
		t.Fatalf("delta update is not the full playlist less %d segments:\n%s\nfull:\n%s", n, delta, full)
	}
	// What was skipped ends CAN-SKIP-UNTIL or more before the end, what stayed less.
	segsFull := lines(full, "#EXTINF:")
	if n == 0 || n >= len(segsFull) || len(lines(delta, "#EXTINF:")) != len(segsFull)-n {
		t.Errorf("%d of %d segments skipped", n, len(segsFull))
	}
	win := f.Store.Snapshot()
	listed := win.Last(20 * time.Second)
	edge := win.Open.End()
	if edge-listed[n-1].End() < until || edge-listed[n].End() >= until {
		t.Errorf("skipped up to segment %d: ends %v and %v before the edge, CAN-SKIP-UNTIL %v", n,
			edge-listed[n-1].End(), edge-listed[n].End(), until)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
