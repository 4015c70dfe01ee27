package compat

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// Clip of the publishes: ffmpeg's MPEG-TS of testutil.Source's encoding (640x360 at 25 fps,
// a key frame a second, AAC), clipSeconds long.
const (
	clipSeconds = 10
	frame       = 40 * time.Millisecond // a video frame at 25 fps
	gop         = time.Second
)

// cutClip is the clip cut off in the middle of a key frame's PES, as a publisher that drops
// mid-frame leaves it, and what of it was sent whole.
type cutClip struct {
	data []byte
	// video is the media time of the whole video frames sent: from the first frame's start
	// to the cut key frame's; frames counts them.
	video  time.Duration
	frames int
	// rate is the clip's bytes a second, to pace the publish.
	rate float64
}

var (
	clipOnce sync.Once
	clipDir  string // removed by TestMain
	clip     *cutClip
	clipErr  error
)

// makeCut encodes the clip once per test binary and cuts it in the middle of the PES of its
// last key frame at least 8 s in. What was sent is read from ffprobe's packets of the whole
// clip (each video PES starts at its packet's pos and ends where the next video one starts).
func makeCut(t *testing.T) *cutClip {
	t.Helper()
	clipOnce.Do(func() {
		clipDir, clipErr = os.MkdirTemp("", "sluice-compat-clip")
		if clipErr != nil {
			return
		}
		path := filepath.Join(clipDir, "clip.ts")
		testutil.MakeClip(t, path, clipSeconds, 1000)
		clip, clipErr = cut(path)
	})
	if clipErr != nil {
		t.Fatalf("clip: %v", clipErr)
	}
	return clip
}

// videoPacket is one video packet of ffprobe's listing.
type videoPacket struct {
	pts time.Duration
	pos int
	key bool
}

func cut(path string) (*cutClip, error) {
	whole, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v", "-show_entries",
		"packet=pts_time,pos,flags", "-of", "csv=p=0", path).Output()
	if err != nil {
		return nil, fmt.Errorf("ffprobe packets: %w", err)
	}
	var pkts []videoPacket
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), ",")
		if len(f) < 3 {
			continue
		}
		pts, err1 := strconv.ParseFloat(f[0], 64)
		pos, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("ffprobe packet %q", sc.Text())
		}
		pkts = append(pkts, videoPacket{pts: time.Duration(pts * float64(time.Second)), pos: pos, key: strings.HasPrefix(f[2], "K")})
	}
	if len(pkts) < 2 {
		return nil, fmt.Errorf("ffprobe found %d video packets", len(pkts))
	}
	k := -1
	for i, p := range pkts[:len(pkts)-1] {
		if p.key && p.pts-pkts[0].pts >= 8*time.Second {
			k = i
		}
	}
	if k < 0 {
		return nil, fmt.Errorf("no key frame 8 s in")
	}
	key, next := pkts[k], pkts[k+1]
	at := key.pos + (next.pos-key.pos)/2/188*188
	if at <= key.pos || next.pos-key.pos < 4*188 {
		return nil, fmt.Errorf("key frame PES of %d bytes: too small to cut", next.pos-key.pos)
	}
	return &cutClip{data: whole[:at], video: key.pts - pkts[0].pts, frames: k,
		rate: float64(len(whole)) / clipSeconds}, nil
}

// publishHTTP sends the cut clip to an INPUT_TYPE_HTTP_LISTEN port as a chunked POST paced at
// the clip's rate, then drops the connection without ending the body: a publisher gone in the
// middle of a frame.
func publishHTTP(port int, c *cutClip) error {
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return err
	}
	defer conn.Close()
	w := bufio.NewWriter(conn)
	fmt.Fprintf(w, "POST / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: video/mp2t\r\nTransfer-Encoding: chunked\r\n\r\n", port)
	const chunk = 7 * 188
	start := time.Now()
	for off := 0; off < len(c.data); off += chunk {
		p := c.data[off:min(off+chunk, len(c.data))]
		fmt.Fprintf(w, "%x\r\n", len(p))
		_, _ = w.Write(p)
		_, _ = w.WriteString("\r\n")
		if err := w.Flush(); err != nil {
			return fmt.Errorf("publish at %d of %d bytes: %w", off, len(c.data), err)
		}
		if ahead := time.Duration(float64(off+len(p))/c.rate*float64(time.Second)) - time.Since(start); ahead > 0 {
			time.Sleep(ahead)
		}
	}
	return nil // the deferred Close drops the connection mid-body
}
