package pulltest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

// Requests records the paths a test origin is asked for. Safe for concurrent use.
type Requests struct {
	mu    sync.Mutex
	paths []string
}

// Origin is an origin server, its requests recorded in q, closed when t ends: it serves
// manifest at path and the files of dir, after answer, which may answer a request itself
// (true) or rewrite its path.
func (q *Requests) Origin(t testing.TB, dir, path, manifest string, answer func(w http.ResponseWriter, r *http.Request) bool) *httptest.Server {
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(q.Wrap(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == path:
			_, _ = w.Write([]byte(manifest))
		case answer(w, r):
		default:
			files.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Wrap returns h, recording the path of each request first.
func (q *Requests) Wrap(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q.mu.Lock()
		q.paths = append(q.paths, r.URL.Path)
		q.mu.Unlock()
		h(w, r)
	})
}

// Count returns how many requests had a path starting with prefix.
func (q *Requests) Count(prefix string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, p := range q.paths {
		if strings.HasPrefix(p, prefix) {
			n++
		}
	}
	return n
}

// String lists the paths asked for, in order.
func (q *Requests) String() string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return strings.Join(q.paths, " ")
}

// Serve serves the files of dir, and at each path of texts what its function returns.
func Serve(t testing.TB, dir string, texts map[string]func() string) *httptest.Server {
	t.Helper()
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if text, ok := texts[r.URL.Path]; ok {
			if strings.HasSuffix(r.URL.Path, ".m3u8") {
				w.Header().Set("Content-Type", "application/vnd.apple.mpegurl")
			}
			_, _ = w.Write([]byte(text()))
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// CheckRepeat pulls the presentation at url to its end four times into one Stream: three
// discontinuities, each seen by a reader, and nothing left behind.
func CheckRepeat(t *testing.T, pull PullFunc, url string) {
	t.Helper()
	s := stream.New("repeat", stream.Options{})
	c := streamtest.Collect(t, s)
	base := testutil.TakeBaseline()
	for i := range 4 {
		if _, err := Now(t, pull, url, s, 30*time.Second); err != nil {
			t.Fatalf("pull %d: %v", i, err)
		}
	}
	if d := s.Discontinuities(); d != 3 {
		t.Fatalf("%d discontinuities, want 3", d)
	}
	base.Check(t, 20*time.Second)
	c.Stop()
	var discs int
	for _, au := range c.Snapshot() {
		if au.Discontinuity {
			discs++
		}
	}
	if discs != 3 {
		t.Fatalf("reader saw %d discontinuities, want 3", discs)
	}
}

// CheckBusy checks that pull refuses a stream that already has a publisher.
func CheckBusy(t *testing.T, pull PullFunc, url string) {
	t.Helper()
	s := stream.New("busy", stream.Options{})
	pub, err := s.Publish()
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	if _, err := Now(t, pull, url, s, 30*time.Second); !errors.Is(err, stream.ErrBusy) {
		t.Fatalf("err %v, want ErrBusy", err)
	}
}

// ErrorCase is a presentation that fails at once: the text served at the entry path (none: a
// 404), and what the error must be.
type ErrorCase struct {
	Name, Text string
	Want       func(error) bool
}

// ErrorServer is what CheckErrors serves: the case's text at Path, JunkSize pseudo-random bytes
// at every path starting /junk, and Else's answer to any other request.
type ErrorServer struct {
	Path     string
	JunkSize int
	Else     http.Handler
}

// CheckErrors runs pull on each case in parallel and checks its error (within 30 s).
func CheckErrors(t *testing.T, pull PullFunc, srv ErrorServer, cases []ErrorCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.URL.Path == srv.Path && tc.Text != "":
					_, _ = w.Write([]byte(tc.Text))
				case r.URL.Path == srv.Path:
					http.NotFound(w, r)
				case strings.HasPrefix(r.URL.Path, "/junk"):
					_, _ = w.Write(Junk(srv.JunkSize))
				default:
					srv.Else.ServeHTTP(w, r)
				}
			}))
			defer hs.Close()
			took, err := Now(t, pull, hs.URL+srv.Path, stream.New("e", stream.Options{}), 30*time.Second)
			if err == nil || !tc.Want(err) {
				t.Fatalf("err %v", err)
			}
			t.Logf("%v (after %v)", err, took.Round(time.Millisecond))
		})
	}
}

// Caps is a pull input's size-cap check, with its caps lowered to 1000 bytes a document and
// 5000 a segment: Big, over 1000 bytes, is served at BigPath, and the pull of it must fail
// saying BigWhere; Small is served at SmallPath, its first segment (any other path answers 6000
// bytes) is over 5000, and the pull of it must fail saying SegmentWhere. The Where texts hold
// %s where the server's URL goes; both errors must also name the cap and be TooLarge.
type Caps struct {
	BigPath, Big, BigWhere         string
	SmallPath, Small, SegmentWhere string
	TooLarge                       error
}

// CheckCaps runs pull with cfg (the package's settings, with the lowered caps) on c's two
// documents.
func CheckCaps[C any](t *testing.T, pull func(context.Context, string, *stream.Stream, *slog.Logger, C) error, cfg C, c Caps) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case c.BigPath:
			_, _ = w.Write([]byte(c.Big))
		case c.SmallPath:
			_, _ = w.Write([]byte(c.Small))
		default:
			_, _ = w.Write(make([]byte, 6000))
		}
	}))
	defer srv.Close()
	for _, tc := range []struct{ path, where, want string }{
		{c.BigPath, fmt.Sprintf(c.BigWhere, srv.URL), "over the cap of 1000 bytes"},
		{c.SmallPath, fmt.Sprintf(c.SegmentWhere, srv.URL), "over the cap of 5000 bytes"},
	} {
		err := pull(context.Background(), srv.URL+tc.path, stream.New("caps", stream.Options{}), slog.New(slog.DiscardHandler), cfg)
		if err == nil || !strings.Contains(err.Error(), tc.where) || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, c.TooLarge) {
			t.Errorf("%s: %v, want an error with %q and %q", tc.path, err, tc.where, tc.want)
		}
	}
}

// VideoSpan returns the first and last video DTS of a session's units, and how many there are.
func VideoSpan(tracks []media.Track, aus []*media.AccessUnit) (first, last int64, n int) {
	first = -1
	for _, au := range aus {
		if tracks[au.Track].Codec.IsVideo() {
			if first < 0 {
				first = au.DTS
			}
			last = au.DTS
			n++
		}
	}
	return first, last, n
}

// Ends returns the last decode time of the video units and of the audio units, on one clock
// (90 kHz), to see that a source kept in step with the other.
func Ends(tracks []media.Track, aus []*media.AccessUnit) (video, audio int64) {
	for _, au := range aus {
		tr := tracks[au.Track]
		ts := media.Rescale(au.DTS, tr.ClockRate, 90000)
		if tr.Codec.IsVideo() {
			video = max(video, ts)
		} else {
			audio = max(audio, ts)
		}
	}
	return video, audio
}

// Play runs pull on url to its end (at most 60 s) into a new Stream named name, collecting what
// a reader gets, and checks those units (streamtest.CheckPulled). It returns how long Pull
// took, the Stream, and the units.
func Play(t *testing.T, pull PullFunc, url, name string) (time.Duration, *stream.Stream, []*media.AccessUnit) {
	t.Helper()
	s := stream.New(name, stream.Options{})
	c := streamtest.Collect(t, s)
	took, err := Now(t, pull, url, s, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Stop()
	aus := c.Snapshot()
	streamtest.CheckPulled(t, s.Tracks(), aus)
	return took, s, aus
}

// The secrets CheckNoSecret puts into the addresses it pulls: a password in the user
// information, a token in the query.
const (
	SecretPassword = "pa55S3cret"
	SecretToken    = "tok3nS3cret"
)

// CheckNoSecret runs pull on addresses that carry SecretPassword and SecretToken against
// origins that fail: one that answers 404 to everything, a closed port, and one that serves
// doc at path but answers 404 to every other request (doc's segment addresses should carry
// SecretToken too, as a CDN's signed URLs do). Each pull must fail within 60 s, and neither its
// error nor any line it logged (debug included) may show a secret.
func CheckNoSecret(t *testing.T, pull PullFunc, path, doc string) {
	t.Helper()
	secrets := func(base string) string {
		return strings.Replace(base, "http://", "http://user:"+SecretPassword+"@", 1) + path + "?token=" + SecretToken + "&mode=live"
	}
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	listing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == path {
			_, _ = w.Write([]byte(doc))
			return
		}
		http.NotFound(w, r)
	}))
	defer listing.Close()
	for _, tc := range []struct{ name, url string }{
		{"404", secrets(notFound.URL)},
		{"closed port", secrets(fmt.Sprintf("http://127.0.0.1:%d", testutil.FreePort(t)))},
		{"segments 404", secrets(listing.URL)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log, logs := testutil.LogBuffer()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			err := pull(ctx, tc.url, stream.New("secret", stream.Options{}), log)
			if ctx.Err() != nil {
				t.Fatal("Pull still running after 60 s")
			}
			if err == nil {
				t.Fatal("Pull: no error")
			}
			t.Logf("Pull: %v", err)
			testutil.NoSecret(t, SecretToken, logs, err)
			testutil.NoSecret(t, SecretPassword, logs, err)
			if !strings.Contains(err.Error(), "token=") {
				t.Errorf("the error no longer names the token's key: %v", err)
			}
		})
	}
}
