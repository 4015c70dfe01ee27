package bench

import (
	"bufio"
	"context"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// mediaPlaylist is what the bench reads of an HLS media playlist.
type mediaPlaylist struct {
	seq  int       // EXT-X-MEDIA-SEQUENCE: number of the first segment listed
	durs []float64 // EXTINF of each listed segment, seconds
}

// parsePlaylist reads the media sequence and the segment durations of an HLS media playlist.
func parsePlaylist(text string) mediaPlaylist {
	var p mediaPlaylist
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "#EXT-X-MEDIA-SEQUENCE:"); ok {
			p.seq, _ = strconv.Atoi(v)
		} else if v, ok := strings.CutPrefix(line, "#EXTINF:"); ok {
			d, err := strconv.ParseFloat(strings.TrimSpace(strings.Split(v, ",")[0]), 64)
			if err == nil {
				p.durs = append(p.durs, d)
			}
		}
	}
	return p
}

// Listing is when each segment of a playlist was first seen.
type Listing struct {
	First  time.Time         // first answer that listed a segment; zero when none did
	Listed chan struct{}     // closed when First is set
	seen   map[int]time.Time // segment number → first seen
	dur    map[int]float64   // segment number → EXTINF
	minSeq int
}

// newListing returns an empty Listing; Listed is closed at its first listed segment.
func newListing() *Listing {
	return &Listing{seen: map[int]time.Time{}, dur: map[int]float64{}, minSeq: math.MaxInt, Listed: make(chan struct{})}
}

// watchPlaylist polls fetch until ctx ends and records new segments in l. It polls every fast
// interval until the first segment is listed and from 200 ms before the next one is due (the
// last listing plus the newest segment's duration) until it is listed, and every 500 ms
// otherwise: polling a server 50 times a second costs it more CPU than the media does.
func watchPlaylist(ctx context.Context, l *Listing, fetch func() (string, error), fast time.Duration) {
	var due time.Time // when the next segment is expected; zero before the first
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		if text, err := fetch(); err == nil {
			now := time.Now()
			p := parsePlaylist(text)
			for i, d := range p.durs {
				n := p.seq + i
				if _, ok := l.seen[n]; !ok {
					l.seen[n], l.dur[n] = now, d
					l.minSeq = min(l.minSeq, n)
					due = now.Add(time.Duration(d * float64(time.Second)))
				}
			}
			if l.First.IsZero() && len(p.durs) > 0 {
				l.First = now
				close(l.Listed)
			}
		}
		next := fast
		if !due.IsZero() && time.Until(due) > 200*time.Millisecond+fast {
			next = min(500*time.Millisecond, time.Until(due)-200*time.Millisecond)
		}
		timer.Reset(next)
	}
}

// Delays returns, for each listed segment but the first, the time from when the publisher sent the
// segment's last frame to when the segment was first seen listed, in milliseconds. A segment
// ends at the sum of the EXTINFs so far, at a key frame of the clip; its last frame is the one
// sent just before that key frame. The first segment waits for the server to start up, which
// the time to the first playlist measures; it is left out.
func (l *Listing) Delays(s *Sent) []float64 {
	var out []float64
	end := 0.0
	for n := l.minSeq; ; n++ {
		seenAt, ok := l.seen[n]
		if !ok {
			return out
		}
		end += l.dur[n]
		k := keyFrameNear(s.clip.Frames, time.Duration(end*float64(time.Second)))
		if k <= 0 || n == l.minSeq {
			continue
		}
		if sent, ok := s.FrameDone(k - 1); ok {
			out = append(out, float64(seenAt.Sub(sent))/float64(time.Millisecond))
		}
	}
}

// keyFrameNear is the index of the key frame within 100 ms of t, or -1.
func keyFrameNear(frames []Frame, t time.Duration) int {
	for i, f := range frames {
		if f.Key && (f.PTS-t).Abs() <= 100*time.Millisecond {
			return i
		}
	}
	return -1
}

// httpPlaylist fetches a playlist over HTTP.
func httpPlaylist(url string) func() (string, error) {
	c := &http.Client{Timeout: 2 * time.Second}
	return func() (string, error) {
		resp, err := c.Get(url)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return "", err
		}
		if resp.StatusCode != http.StatusOK {
			return "", errNoPlaylist
		}
		return string(b), nil
	}
}

// filePlaylist reads a playlist ffmpeg writes to disk.
func filePlaylist(path string) func() (string, error) {
	return func() (string, error) {
		b, err := os.ReadFile(path)
		return string(b), err
	}
}
