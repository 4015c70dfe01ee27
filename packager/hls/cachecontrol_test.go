package hls_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/packager/hls"
	"github.com/sluicemedia/sluice/packager/segment"
)

// maxAge reads max-age and s-maxage of a Cache-Control value, or -1 when it has none; the two
// must agree.
func maxAge(t *testing.T, cc string) int {
	t.Helper()
	age, shared := -1, -1
	for _, d := range strings.Split(cc, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(d), "=")
		n, err := strconv.Atoi(v)
		switch k {
		case "max-age":
			if err != nil {
				t.Fatalf("Cache-Control %q: bad max-age", cc)
			}
			age = n
		case "s-maxage":
			if err != nil {
				t.Fatalf("Cache-Control %q: bad s-maxage", cc)
			}
			shared = n
		}
	}
	if age != shared {
		t.Fatalf("Cache-Control %q: max-age and s-maxage differ", cc)
	}
	return age
}

// TestCacheHeadersClassic: a classic playlist may be reused by a cache in front for half a
// segment at most (whole seconds, "no-cache" under one), a blocking reload's answer that holds
// the asked segment for six fragments, one that timed out without it like a plain one;
// segments and init segments for good.
func TestCacheHeadersClassic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		fragment time.Duration
		want     string
	}{
		{time.Second, "no-cache"},
		{2 * time.Second, "public, max-age=1, s-maxage=1"},
		{3 * time.Second, "public, max-age=1, s-maxage=1"},
		{6 * time.Second, "public, max-age=3, s-maxage=3"},
		{10 * time.Second, "public, max-age=5, s-maxage=5"},
	} {
		f := newFixture(t, hls.Options{Live: segment.Live{ID: "p1", FragmentSize: tc.fragment, WaitTimeout: 20 * time.Millisecond}})
		f.Feed(t, 10*time.Second)
		res, body := f.Get(t, http.MethodGet, "index.m3u8")
		if res.StatusCode != http.StatusOK {
			t.Fatalf("playlist: %d %s", res.StatusCode, body)
		}
		cc := res.Header.Get("Cache-Control")
		if cc != tc.want {
			t.Errorf("fragment %v: playlist Cache-Control %q, want %q", tc.fragment, cc, tc.want)
		}
		if age := maxAge(t, cc); time.Duration(age)*time.Second > tc.fragment/2 {
			t.Errorf("fragment %v: playlist reusable for %d s, more than half a segment", tc.fragment, age)
		}

		newest := f.Store.Snapshot().Newest().Seq
		res, body = f.Get(t, http.MethodGet, "index.m3u8?_HLS_msn="+itoa(newest))
		if want := segment.PlaylistCache(6 * tc.fragment); res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") != want {
			t.Errorf("fragment %v: blocking reload: %d %q, want %q (%s)", tc.fragment, res.StatusCode, res.Header.Get("Cache-Control"), want, body)
		}
		// Segment newest+1 does not come within the block timeout: the answer lacks it and
		// is reused no longer than a plain one.
		res, body = f.Get(t, http.MethodGet, "index.m3u8?_HLS_msn="+itoa(newest+1))
		if res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") != tc.want {
			t.Errorf("fragment %v: timed-out blocking reload: %d %q, want %q (%s)", tc.fragment, res.StatusCode, res.Header.Get("Cache-Control"), tc.want, body)
		}

		id := f.Store.ID()
		for _, name := range []string{"init_" + id + "_1.mp4", "seg_" + id + "_1.m4s"} {
			res, _ := f.Get(t, http.MethodGet, name)
			if res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") != segment.CacheImmutable {
				t.Errorf("%s: %d %q", name, res.StatusCode, res.Header.Get("Cache-Control"))
			}
		}
		// Warming up and errors are not for caches to keep.
		if res, _ := f.Get(t, http.MethodGet, "seg_"+id+"_99999.m4s"); res.StatusCode != http.StatusNotFound || res.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("missing segment: %d %q", res.StatusCode, res.Header.Get("Cache-Control"))
		}
	}
	f := newFixture(t, hls.Options{Live: segment.Live{ID: "p1", InitialSegments: 3}})
	if res, _ := f.Get(t, http.MethodGet, "index.m3u8"); res.StatusCode != http.StatusNotFound || res.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("warming up: %d %q", res.StatusCode, res.Header.Get("Cache-Control"))
	}
}

// TestCacheHeadersLowLatency: a low-latency playlist asked plainly (a player tuning in) may be
// reused for a part (333 ms: not at all); the answer to a blocking reload (_HLS_msn,
// _HLS_part), whose URL names what it waited for, for six segments; parts for good.
func TestCacheHeadersLowLatency(t *testing.T) {
	t.Parallel()
	f, seq := newPartsFixture(t, 50*time.Millisecond, 2)
	for _, tc := range []struct{ query, want string }{
		{"", "no-cache"},
		{"?_HLS_skip=YES", "no-cache"},
		{"?_HLS_msn=" + itoa(seq) + "&_HLS_part=1", "public, max-age=6, s-maxage=6"},
		{"?_HLS_msn=" + itoa(seq-1), "public, max-age=6, s-maxage=6"},
		{"?_HLS_msn=" + itoa(seq) + "&_HLS_part=1&_HLS_skip=YES", "public, max-age=6, s-maxage=6"},
	} {
		res, body := f.Get(t, http.MethodGet, "index.m3u8"+tc.query)
		if res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") != tc.want {
			t.Errorf("index.m3u8%s: %d %q, want %q (%s)", tc.query, res.StatusCode, res.Header.Get("Cache-Control"), tc.want, body)
		}
	}
	// A blocking reload that times out is a 503 no cache keeps.
	res, _ := f.Get(t, http.MethodGet, "index.m3u8?_HLS_msn="+itoa(seq+1)+"&_HLS_part=1")
	if res.StatusCode != http.StatusServiceUnavailable || strings.Contains(res.Header.Get("Cache-Control"), "max-age") {
		t.Errorf("timed-out blocking reload: %d %q", res.StatusCode, res.Header.Get("Cache-Control"))
	}
	if res, _ := f.Get(t, http.MethodGet, partName(f.Store, seq, 0)); res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") != segment.CacheImmutable {
		t.Errorf("part: %d %q", res.StatusCode, res.Header.Get("Cache-Control"))
	}
}
