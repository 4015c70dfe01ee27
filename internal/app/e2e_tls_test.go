package app

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/browser"
)

// TestTLSLowLatencyHTTP2: with --tls-cert and --tls-key the API and a low-latency player's port
// serve HTTPS with HTTP/2: the API answers over h2 and gives https player URLs; on ONE h2
// connection to the player, eight blocking requests at once (playlist reloads for coming parts
// and a whole coming segment, and the preload hint's part) are each answered once what they
// ask for exists; ffmpeg reads the player's HLS over https, checking the certificate; hls.js in
// lowLatencyMode plays it 22 s in headless Chromium without a stall, fetching over h2.
func TestTLSLowLatencyHTTP2(t *testing.T) {
	testutil.RequireFFmpeg(t)
	browser.Require(t)
	dir := t.TempDir()
	cert, key := testutil.WriteCert(t, dir, "server")
	env := map[string]string{"SLUICE_TLS_CERT": cert, "SLUICE_TLS_KEY": key}
	ts := startServerEnv(t, t.TempDir(), nil, func(k string) string { return env[k] })
	defer ts.stop()
	if !strings.HasPrefix(ts.base, "https://") {
		t.Fatalf("API base %s", ts.base)
	}

	// The API over h2.
	req, _ := http.NewRequest(http.MethodPost, ts.base+"/api/vod/getAll", strings.NewReader("{}"))
	req.Header.Set("x-access-token", ts.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 || resp.TLS == nil || resp.TLS.NegotiatedProtocol != "h2" {
		t.Fatalf("API over TLS: %d %s, ALPN %v", resp.StatusCode, resp.Proto, resp.TLS != nil && resp.TLS.NegotiatedProtocol == "h2")
	}
	// Plain HTTP to the TLS port is refused with net/http's 400, not served.
	if code, _ := httpGet(t, "http"+strings.TrimPrefix(ts.base, "https")+"/healthz"); code != http.StatusBadRequest {
		t.Errorf("plain HTTP to the HTTPS API port: %d, want 400", code)
	}

	vodPort := testutil.FreePort(t)
	body := lowLatencyTestVideo("ll-tls", vodPort)
	id := ts.create("vod", body)
	var rec map[string]any
	ts.call("/api/vod/getById", map[string]any{"id": id}, http.StatusOK, &rec)
	base := fmt.Sprintf("https://127.0.0.1:%d/hls/%s/%s/", vodPort, id, id)
	if rec["hls_url"] != base+"index.m3u8" || rec["dash_url"] != base+"index.mpd" {
		t.Errorf("player URLs %v, %v; want %s", rec["hls_url"], rec["dash_url"], base+"index.m3u8")
	}

	// One client, one connection: every dial is counted.
	var dials atomic.Int32
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: testutil.CertPool(t, cert)},
		ForceAttemptHTTP2: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}}
	// get returns the status, protocol and body of GET url.
	get := func(url string) (int, string, string, error) {
		resp, err := client.Get(url)
		if err != nil {
			return 0, "", "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Proto, string(b), err
	}
	var pl string
	testutil.Eventually(t, 40*time.Second, "low-latency playlist served over https", func() bool {
		code, proto, body, err := get(base + "index.m3u8")
		if err != nil || code != http.StatusOK || !strings.Contains(body, "#EXT-X-PRELOAD-HINT") {
			return false
		}
		if proto != "HTTP/2.0" {
			t.Fatalf("player playlist over %s, want HTTP/2", proto)
		}
		pl = body
		return true
	})
	blockingReloads(t, client, base, pl, &dials)

	ffmpegOverHTTPS(t, cert, base+"index.m3u8")

	// hls.js in the harness's page plays the playlist; then the player's own watch page (same
	// origin, so its resource timing shows each request's protocol) plays it too.
	watch := fmt.Sprintf("https://127.0.0.1:%d/", vodPort)
	res := browser.Play(t, "hls", base+"index.m3u8", 22*time.Second, browser.LowLatency(), browser.Insecure(), browser.Protocols(), browser.CheckPage(watch))
	if !res.OK || res.PlayedSeconds < 18 || res.Stalls != 0 || res.Latency == nil || !res.Latency.LowLatencyMode {
		t.Errorf("hls.js lowLatencyMode over https: %s; warnings %q", res, res.Warnings)
	}
	if res.Protocols["h2"] < 20 || len(res.Protocols) != 1 {
		t.Errorf("the harness page's responses from the player, by protocol: %v; want all h2", res.Protocols)
	}
	if c := res.CheckPage; c == nil || !c.Playing || c.Navigation != "h2" || c.Protocols["h2"] < 5 || len(c.Protocols) != 1 {
		t.Errorf("watch page %s over https: %+v; want it playing, itself and every resource over h2", watch, c)
	} else {
		t.Logf("watch page: %s, resources by nextHopProtocol %v, playing at %.1f s", c.Navigation, c.Protocols, c.CurrentTime)
	}
}

// llState is what a low-latency playlist says of the live edge: the newest complete segment,
// and the partial segments of the one in progress (newest+1) it lists.
type llState struct {
	newest int64
	parts  int
	hint   string
}

func parseLL(t *testing.T, pl string) llState {
	t.Helper()
	var st llState
	seq, segs := int64(-1), int64(0)
	sc := bufio.NewScanner(strings.NewReader(pl))
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "#EXT-X-MEDIA-SEQUENCE:"):
			n, err := strconv.ParseInt(strings.TrimPrefix(l, "#EXT-X-MEDIA-SEQUENCE:"), 10, 64)
			if err != nil {
				t.Fatalf("playlist: %q", l)
			}
			seq = n
		case strings.HasPrefix(l, "#EXTINF:"):
			segs++
			st.parts = 0
		case strings.HasPrefix(l, "#EXT-X-PART:"):
			st.parts++
		case strings.HasPrefix(l, "#EXT-X-PRELOAD-HINT:"):
			_, uri, _ := strings.Cut(l, `URI="`)
			st.hint, _, _ = strings.Cut(uri, `"`)
		}
	}
	if seq < 0 || segs == 0 {
		t.Fatalf("playlist without media sequence or segments:\n%s", pl)
	}
	st.newest = seq + segs - 1
	return st
}

// has tells whether the playlist state holds segment msn complete, or its part (part >= 0).
func (s llState) has(msn int64, part int) bool {
	return s.newest >= msn || part >= 0 && msn == s.newest+1 && s.parts > part
}

// blockingReloads sends, at once on the client's one h2 connection, blocking playlist reloads
// for the coming parts of the segment in progress and of the next one, one for the next
// segment whole, and a request for the hinted part; each must be answered 200 over HTTP/2
// with what it asked for, the segment after next only after the parts before it.
func blockingReloads(t *testing.T, client *http.Client, base, pl string, dials *atomic.Int32) {
	t.Helper()
	st := parseLL(t, pl)
	open := st.newest + 1
	type ask struct {
		msn  int64
		part int // -1: the whole segment
	}
	asks := []ask{{open, st.parts}, {open, st.parts + 1}, {open, st.parts + 2},
		{open + 1, 0}, {open + 1, 1}, {open + 1, 2}, {open + 1, -1}}
	type answer struct {
		code  int
		proto string
		local string
		took  time.Duration
		body  string
		err   error
	}
	answers := make([]answer, len(asks)+1)
	before := dials.Load()
	start := time.Now()
	var wg sync.WaitGroup
	fetch := func(i int, url string) {
		defer wg.Done()
		var local string
		trace := &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) { local = ci.Conn.LocalAddr().String() }}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err != nil {
			answers[i] = answer{err: err, took: time.Since(start)}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		answers[i] = answer{code: resp.StatusCode, proto: resp.Proto, local: local, took: time.Since(start), body: string(b), err: err}
	}
	for i, a := range asks {
		q := "?_HLS_msn=" + strconv.FormatInt(a.msn, 10)
		if a.part >= 0 {
			q += "&_HLS_part=" + strconv.Itoa(a.part)
		}
		wg.Add(1)
		go fetch(i, base+"index.m3u8"+q)
	}
	wg.Add(1)
	go fetch(len(asks), base+st.hint)
	wg.Wait()

	if n := dials.Load() - before; n != 0 {
		t.Errorf("the concurrent blocking requests dialled %d more connections; want them all on the one h2 connection", n)
	}
	conns := map[string]bool{}
	for i, a := range answers {
		what := "preload hint " + st.hint
		if i < len(asks) {
			what = fmt.Sprintf("_HLS_msn=%d _HLS_part=%d", asks[i].msn, asks[i].part)
		}
		t.Logf("%s: %d %s after %v on %s", what, a.code, a.proto, a.took.Round(time.Millisecond), a.local)
		conns[a.local] = true
		if a.err != nil || a.code != http.StatusOK || a.proto != "HTTP/2.0" {
			t.Errorf("%s: %d %s %v", what, a.code, a.proto, a.err)
			continue
		}
		if i == len(asks) {
			if !strings.Contains(a.body, "moof") || !strings.Contains(a.body, "mdat") {
				t.Errorf("%s: %d bytes, no moof and mdat", what, len(a.body))
			}
			continue
		}
		if got := parseLL(t, a.body); !got.has(asks[i].msn, asks[i].part) {
			t.Errorf("%s: answered with newest segment %d and %d parts of the next", what, got.newest, got.parts)
		}
	}
	if len(conns) != 1 {
		t.Errorf("answers came on %d connections (%v), want one", len(conns), conns)
	}
	// The whole next-but-one segment exists a segment (1 s) after the part in progress: its
	// request was held, while the first was answered within a part or two.
	if first, whole := answers[0].took, answers[len(asks)-1].took; whole < first+500*time.Millisecond || whole > 3*time.Second {
		t.Errorf("first part answered after %v, next segment whole after %v: want the second held about a segment longer, within the 3 s block timeout", first, whole)
	}
}

// ffmpegOverHTTPS reads the playlist with ffmpeg over https, verifying the server's certificate
// against certFile, and counts the video frames it decodes.
func ffmpegOverHTTPS(t *testing.T, certFile, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ffmpeg", "-hide_banner", "-nostdin", "-v", "error",
		"-tls_verify", "1", "-ca_file", certFile, "-i", url,
		"-map", "0:v:0", "-frames:v", "50", "-f", "framemd5", "-")
	out, err := cmd.Output()
	var stderr string
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		stderr = string(ee.Stderr)
	}
	frames := 0
	for l := range strings.SplitSeq(string(out), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			frames++
		}
	}
	if err != nil || frames != 50 {
		t.Errorf("ffmpeg over https: %d frames, %v: %s", frames, err, stderr)
	}
}
