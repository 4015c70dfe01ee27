package hostile

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/storage"
)

// The cases that passed before issue 13, kept short.
const (
	// quickAttack is how long each of these attacks is repeated while the probe runs.
	quickAttack = 1500 * time.Millisecond
	// udpFloodFor is how long random datagrams are sent to a UDP listen input, at full speed.
	udpFloodFor = 3 * time.Second
	// passwdMarker is in the first line of /etc/passwd: no answer may hold it.
	passwdMarker = "root:x:0:0"
	// injected marks what an injection attempt would add as ffmpeg arguments.
	injected = "title=INJECTED"
)

// quickBound is the RSS bound of the quick API attacks: nothing of theirs is kept.
var quickBound = budget(0, "nothing: these requests keep no state")

// repeat runs attack again and again for at least d (at least once).
func repeat(d time.Duration, attack func()) {
	end := time.Now().Add(d)
	for {
		attack()
		if time.Now().After(end) {
			return
		}
	}
}

// testPassed runs the cases that passed before issue 13, each against its own server.
func testPassed(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"udp-flood", testUDPFlood},
		{"traversal", testTraversal},
		{"ffmpeg-injection", testInjection},
		{"jwt", testJWT},
		{"same-name", testSameName},
	} {
		t.Run(c.name, c.run)
	}
}

// testUDPFlood: random datagrams at full speed to a player's UDP listen input for 3 s; then a
// real publisher sends to the same input and the player plays.
func testUDPFlood(t *testing.T) {
	s := start(t, options{})
	pl := s.listenPlayer("udp-flood", "INPUT_TYPE_UDP_LISTEN", "UDP")
	vod, vodPort, in := pl.id, pl.port, pl.inPort
	c, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", in))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Random bytes carry no TS sync byte pattern a demuxer keeps: at most its caps are held.
	w := s.watch()
	buf := make([]byte, datagram)
	var sent int64
	for end := time.Now().Add(udpFloodFor); time.Now().Before(end); {
		_, _ = rand.Read(buf)
		if n, err := c.Write(buf); err == nil {
			sent += int64(n)
		}
	}
	w.stop().check(t, s, budget(tsDemuxBytes, "the TS demuxer's caps"))
	t.Logf("%d MB of random datagrams sent in %v", sent/1e6, udpFloodFor)

	publish(t, udpOut(in)...)
	playHLS(t, vod, vodPort)
}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{Timeout: 10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// rawGet sends path as is (no cleaning of dot segments or escapes) with the admin token and
// returns the status and body.
func (s *server) rawGet(base, path string) (int, string) { return s.rawGetAs(base, path, s.token) }

// rawGetAs is rawGet with token (none when empty).
func (s *server) rawGetAs(base, path, token string) (int, string) {
	s.t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/", nil)
	if err != nil {
		s.t.Fatal(err)
	}
	req.URL.Opaque = path
	if token != "" {
		req.Header.Set("x-access-token", token)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		s.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}

// testTraversal: dot segments and escapes in download and playback paths on the API port
// and on a player's port never reach a file outside what they serve, and a recording named to
// climb out of the recordings folder records inside it.
func testTraversal(t *testing.T) {
	s := start(t, options{})
	p := s.rtmpPlayer("after-traversal")
	rec := s.create("recording", map[string]any{"recording_name": "../../../escape", "recording_type": "RECORDING_STREAM_TO_FILE",
		"input": tinyTestVideo(), "output_format": "mp4"})
	var file recordedFile
	var path string
	testutil.Eventually(t, mediaTimeout, "the recording's first file", func() bool {
		var r struct {
			Files []struct {
				ID   string `json:"id"`
				Path string `json:"path"`
			} `json:"recordedFiles"`
		}
		s.call("/api/recording/getById", map[string]any{"id": rec}, http.StatusOK, &r)
		if len(r.Files) == 0 {
			return false
		}
		file.Name, path = r.Files[0].ID, r.Files[0].Path
		return true
	})
	full := filepath.Join(s.data, "recordings", path)
	if slices.Contains(strings.Split(filepath.ToSlash(path), "/"), "..") || filepath.IsAbs(path) ||
		!strings.HasPrefix(full, filepath.Join(s.data, "recordings")+string(filepath.Separator)) {
		t.Errorf("the recording's file is %q, outside the recordings folder", path)
	}
	if _, err := os.Stat(full); err != nil {
		t.Errorf("the recording's file: %v", err)
	}
	t.Logf("the recording named \"../../../escape\" writes %s inside the recordings folder", path)
	dl := "/api/recording/download/" + file.Name
	paths := []string{
		"/api/recording/download/..%2F..%2F..%2F..%2Fetc%2Fpasswd",
		"/api/recording/download/../../../../etc/passwd",
		"/api/recording/download/%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd",
		"/api/recording/download/....//....//etc/passwd",
		dl + "/../../../../../etc/passwd",
		dl + "%2F..%2F..%2F..%2F..%2Fetc%2Fpasswd",
		"/api/recording/download-memory/..%2F..%2Fetc%2Fpasswd",
		"/hls/../../../../etc/passwd",
		"/hls/" + p.id + "/..%2F..%2F..%2F..%2Fetc%2Fpasswd",
		"/hls/" + p.id + "/" + p.id + "/..%2F..%2F..%2F..%2Fetc%2Fpasswd",
		"/hls/" + p.id + "/" + p.id + "/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
		"/hls/%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd/index.m3u8",
	}
	w := s.watch()
	var answers []string
	repeat(quickAttack, func() {
		answers = answers[:0]
		for _, path := range paths {
			for _, base := range []string{s.base, fmt.Sprintf("http://127.0.0.1:%d", p.port)} {
				code, body := s.rawGet(base, path)
				answers = append(answers, fmt.Sprint(code))
				if code < 300 || strings.Contains(body, passwdMarker) {
					t.Errorf("GET %s%s: %d %.120q", base, path, code, body)
				}
			}
		}
	})
	w.stop().check(t, s, quickBound)
	t.Logf("%d traversal paths on the API port and the player's port: answered %s", len(paths), strings.Join(answers, " "))
	// The real download still works.
	if code, body := s.rawGet(s.base, dl); code != http.StatusOK || len(body) == 0 {
		t.Errorf("the recording's download: %d, %d bytes", code, len(body))
	}
	p.prove(t)
}

// childArgs returns the argument lists of the server's live children.
func (s *server) childArgs() [][]string {
	var out [][]string
	for _, pid := range s.children() {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || len(raw) == 0 {
			continue
		}
		out = append(out, strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00"))
	}
	return out
}

// testInjection: addresses and transcoding fields that try to smuggle options into ffmpeg's
// command line are refused with 400, and an address with spaces that is taken reaches ffmpeg
// as one argument.
func testInjection(t *testing.T) {
	s := start(t, options{})
	p := s.rtmpPlayer("after-injection")
	// An HTTP server that never answers: ffmpeg waits on it with its arguments to be read.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	requests := make(chan string, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b := make([]byte, 4096)
				n, _ := c.Read(b)
				line, _, _ := strings.Cut(string(b[:n]), "\r\n")
				select {
				case requests <- line:
				default:
				}
				time.Sleep(30 * time.Second)
			}()
		}
	}()
	other := func(url string) map[string]any {
		return map[string]any{"restream_name": "inject", "input": map[string]any{"input_type": "INPUT_TYPE_OTHER", "input_stream_url": url},
			"output": map[string]any{"output_type": "OUTPUT_TYPE_UDP_URL", "output_stream_url": "udp://127.0.0.1:9"}}
	}
	transcoded := func(field, value string) map[string]any {
		return map[string]any{"restream_name": "inject", "input": tinyTestVideo(),
			"transcoding": map[string]any{"video_transcoding": "libx264", field: value},
			"output":      map[string]any{"output_type": "OUTPUT_TYPE_UDP_URL", "output_stream_url": "udp://127.0.0.1:9"}}
	}
	refused := []map[string]any{
		other("-i /etc/passwd"),
		other(" -y -i /etc/passwd"),
		other("/etc/passwd"),
		other("file:/etc/passwd"),
		other("concat:/etc/passwd|/etc/hostname"),
		other("subfile,,start,0,end,0,,:/etc/passwd"),
		other("crypto+file:/etc/passwd"),
		other("data:text/plain,hello"),
		other("gopher://127.0.0.1/x"),
		transcoded("preset", "fast -y"),
		transcoded("tune", "-metadata "+injected),
		transcoded("pix_fmt", "-y"),
		transcoded("force_key_frames", "-y"),
		transcoded("force_key_frames", "expr:1 -metadata "+injected),
	}
	w := s.watch()
	repeat(quickAttack, func() {
		for _, body := range refused {
			st, raw, err := s.post("/api/restream/create", body)
			if err != nil || st != http.StatusBadRequest || !strings.Contains(string(raw), "VALIDATION") {
				t.Errorf("create %v: %d %s %v, want 400 VALIDATION", body, st, raw, err)
			}
		}
	})
	w.stop().check(t, s, quickBound)
	t.Logf("%d injection attempts refused with 400", len(refused))

	// An allowed address with spaces: one argument of ffmpeg, requested whole.
	url := fmt.Sprintf("http://%s/a -metadata %s -y /tmp/owned", ln.Addr(), injected)
	st, raw, err := s.post("/api/restream/create", other(url))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("an address with spaces: %d %s", st, raw)
	if st == http.StatusCreated {
		var args []string
		testutil.Eventually(t, 15*time.Second, "ffmpeg reading the address", func() bool {
			for _, a := range s.childArgs() {
				if strings.Contains(strings.Join(a, " "), injected) {
					args = a
					return true
				}
			}
			return false
		})
		whole := 0
		for _, a := range args {
			if a == injected || a == "-metadata" || a == "/tmp/owned" {
				t.Errorf("the address was split into ffmpeg arguments: %q", args)
			}
			if strings.Contains(a, injected) && strings.Contains(a, "/tmp/owned") {
				whole++
			}
		}
		if whole != 1 {
			t.Errorf("ffmpeg's arguments %q, want the address as one of them", args)
		}
		select {
		case line := <-requests:
			t.Logf("ffmpeg asked for %q", line)
		case <-time.After(10 * time.Second):
			t.Errorf("ffmpeg never requested the address")
		}
	} else if st != http.StatusBadRequest {
		t.Errorf("an address with spaces: %d %s, want 201 (one argument) or 400", st, raw)
	}
	p.prove(t)
}

// jwtSign returns a JWT with the given header and claims, signed with HMAC-SHA256 under key
// (no signature when key is nil).
func jwtSign(header, claims map[string]any, key []byte) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	unsigned := enc(header) + "." + enc(claims)
	if key == nil {
		return unsigned + "."
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(unsigned))
	return unsigned + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// testJWT: tokens with alg none, a wrong key, HS512, an expired date, a changed payload or
// a missing id are refused with 401; a token made the same way with the server's own key is
// accepted (so the refusals are about the tricks, not the making).
func testJWT(t *testing.T) {
	s := start(t, options{})
	p := s.rtmpPlayer("after-jwt")
	parts := strings.Split(s.token, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var mine struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(payload, &mine); err != nil || mine.ID == "" {
		t.Fatalf("the login token's claims %s: %v", payload, err)
	}
	st, err := storage.Open(filepath.Join(s.data, "sluice.db"))
	if err != nil {
		t.Fatal(err)
	}
	hexKey, _, err := st.Setting(context.Background(), "jwt_secret")
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	key, err := hex.DecodeString(hexKey)
	if err != nil || len(key) != 32 {
		t.Fatalf("the store's token secret: %d bytes, %v", len(key), err)
	}
	now := time.Now()
	claims := func(iat, exp time.Time) map[string]any {
		jti := make([]byte, 16)
		_, _ = rand.Read(jti)
		return map[string]any{"id": mine.ID, "iat": iat.Unix(), "exp": exp.Unix(), "jti": hex.EncodeToString(jti)}
	}
	hs256 := map[string]any{"alg": "HS256", "typ": "JWT"}
	valid := claims(now, now.Add(time.Hour))
	wrongKey := make([]byte, 32)
	_, _ = rand.Read(wrongKey)
	good := jwtSign(hs256, valid, key)
	gp := strings.Split(good, ".")
	elevated := claims(now, now.Add(100*365*24*time.Hour))
	tricks := map[string]string{
		"alg none":          jwtSign(map[string]any{"alg": "none", "typ": "JWT"}, valid, nil),
		"alg None":          jwtSign(map[string]any{"alg": "None", "typ": "JWT"}, valid, nil),
		"alg none, old sig": jwtSign(map[string]any{"alg": "none", "typ": "JWT"}, valid, nil) + gp[2],
		"wrong key":         jwtSign(hs256, valid, wrongKey),
		"HS512 header":      jwtSign(map[string]any{"alg": "HS512", "typ": "JWT"}, valid, key),
		"empty key":         jwtSign(hs256, valid, []byte{}),
		"expired":           jwtSign(hs256, claims(now.Add(-2*time.Hour), now.Add(-time.Hour)), key),
		"changed payload":   gp[0] + "." + strings.Split(jwtSign(hs256, elevated, key), ".")[1] + "." + gp[2],
		"no id":             jwtSign(hs256, map[string]any{"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "jti": "x"}, key),
		"unknown id":        jwtSign(hs256, map[string]any{"id": "0123456789abcdef01234567", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "jti": "y"}, key),
		"no signature":      gp[0] + "." + gp[1] + ".",
		"garbage":           "x.y.z",
	}
	if code, _, _ := s.request("/api/vod/getAll", nil, good); code != http.StatusOK {
		t.Fatalf("a token signed here with the server's key: %d, want 200 (the tricks below would prove nothing)", code)
	}
	w := s.watch()
	repeat(quickAttack, func() {
		for name, tok := range tricks {
			for _, path := range []string{"/api/vod/getAll", "/api/vod/create", "/api/utils/getStat"} {
				code, raw, err := s.request(path, map[string]any{}, tok)
				if err != nil || code != http.StatusUnauthorized {
					t.Errorf("%s token on %s: %d %s %v, want 401", name, path, code, raw, err)
				}
			}
			code, body := s.rawGetAs(s.base, "/api/recording/download/0123456789abcdef01234567?token="+tok, "")
			if code != http.StatusUnauthorized {
				t.Errorf("%s token in a download link: %d %.100s, want 401", name, code, body)
			}
		}
	})
	w.stop().check(t, s, quickBound)
	t.Logf("%d forged tokens refused on every path", len(tricks))
	p.prove(t)
}

// testSameName: 20 creates of one name at once, and 20 of different names on one port, each
// round on new values: exactly one of each round is created, the others answer 409.
func testSameName(t *testing.T) {
	s := start(t, options{})
	p := s.rtmpPlayer("after-same-name")
	const racers = 20
	rounds, lost := 0, 0
	// Ports handed out once are not handed out again: a player that is not active holds its
	// port in the store without binding it, so the system may offer it again.
	used := map[int]bool{}
	fresh := func() int {
		for {
			if q := testutil.FreePort(t); !used[q] {
				used[q] = true
				return q
			}
		}
	}
	w := s.watch()
	repeat(quickAttack, func() {
		name := fmt.Sprintf("dup-%d", rounds)
		port := fresh()
		// Distinct ports for the racers of one name, so that only the name is shared.
		own := make([]int, racers)
		for i := range own {
			own[i] = fresh()
		}
		for _, kind := range []string{"name", "port"} {
			codes := make([]int, racers)
			bodies := make([]string, racers)
			var wg sync.WaitGroup
			for i := range racers {
				wg.Go(func() {
					var body map[string]any
					if kind == "name" {
						body = playerBody(name, own[i], tinyTestVideo())
					} else {
						body = playerBody(fmt.Sprintf("port-%d-%d", rounds, i), port, tinyTestVideo())
					}
					body["active"] = false
					var raw []byte
					codes[i], raw, _ = s.post("/api/vod/create", body)
					bodies[i] = string(raw)
				})
			}
			wg.Wait()
			created, elsewhere := 0, 0
			for i, c := range codes {
				want := "NAME_TAKEN"
				if kind == "port" {
					want = "PORT_TAKEN"
				}
				switch {
				case c == http.StatusCreated:
					created++
				case c == http.StatusConflict && strings.Contains(bodies[i], want):
					if strings.Contains(bodies[i], "another program") {
						elsewhere++
					}
				default:
					t.Errorf("same %s, create %d: %d %s", kind, i, c, bodies[i])
				}
			}
			if created == 0 && elsewhere == racers {
				// Another program of this busy machine took the free port meanwhile.
				t.Logf("same port: port %d taken by another program meanwhile; round not counted", port)
				lost++
				continue
			}
			if created != 1 {
				t.Errorf("same %s: %d of %d concurrent creates succeeded, want 1", kind, created, racers)
			}
		}
		rounds++
	})
	w.stop().check(t, s, quickBound)
	var n struct {
		Count int `json:"count"`
	}
	s.call("/api/vod/getCount", nil, http.StatusOK, &n)
	t.Logf("%d rounds of %d concurrent creates of one name and of one port; %d players exist", rounds, racers, n.Count)
	if want := 2*rounds + 1 - lost; n.Count != want {
		t.Errorf("%d players, want %d (one a round and kind, and the proof's)", n.Count, want)
	}
	p.prove(t)
}
