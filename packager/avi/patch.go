package avi

import (
	"fmt"
	"io"
)

// totals is what a stream's media gave, for its header.
type totals struct {
	scale, rate       uint32
	count, firstCount int64
	bytes             int64
	maxChunk          uint32
	super             []superEntry
}

// writeAt writes b at offset off; the caller seeks back to where it appends.
func writeAt(ws io.WriteSeeker, off int64, b []byte) error {
	if _, err := ws.Seek(off, io.SeekStart); err != nil {
		return fmt.Errorf("avi: seek to %d: %w", off, err)
	}
	if _, err := ws.Write(b); err != nil {
		return fmt.Errorf("avi: write %d bytes at %d: %w", len(b), off, err)
	}
	return nil
}

// patchRates writes each stream's chunk duration into its header and the video frame
// duration into avih, then returns to end.
func (l *layout) patchRates(ws io.WriteSeeker, t []totals, end int64) error {
	var b [8]byte
	for i, sl := range l.streams {
		putLE32(b[0:], t[i].scale)
		putLE32(b[4:], t[i].rate)
		if err := writeAt(ws, sl.strh+strhScale, b[:8]); err != nil {
			return err
		}
	}
	if v := l.video(); v >= 0 {
		putLE32(b[:], microSecPerFrame(t[v]))
		if err := writeAt(ws, l.avih+avihMicroSecPerFrame, b[:4]); err != nil {
			return err
		}
	}
	_, err := ws.Seek(end, io.SeekStart)
	return err
}

// patchHeader writes the rates, lengths, buffer sizes, byte rates and super indexes of every
// stream, and the main and OpenDML headers' totals, then returns to end.
func (l *layout) patchHeader(ws io.WriteSeeker, t []totals, end int64, buf []byte) error {
	if err := l.patchRates(ws, t, end); err != nil {
		return err
	}
	var b [16]byte
	var seconds float64
	var bytes int64
	var maxChunk uint32
	for i, sl := range l.streams {
		seconds = max(seconds, chunkSeconds(t[i], t[i].count))
		bytes += t[i].bytes
		maxChunk = max(maxChunk, t[i].maxChunk)
		putLE32(b[0:], uint32(t[i].count))
		putLE32(b[4:], t[i].maxChunk)
		if err := writeAt(ws, sl.strh+strhLength, b[:8]); err != nil {
			return err
		}
		if sl.audio {
			putLE32(b[:], uint32(float64(t[i].bytes)/max(chunkSeconds(t[i], t[i].count), 1e-3)))
			if err := writeAt(ws, sl.strf+strfAvgBytesPerSec, b[:4]); err != nil {
				return err
			}
		}
		if sl.indx >= 0 {
			if len(t[i].super) > sl.indxCap {
				return fmt.Errorf("avi: stream %d: %d segments: %w (room for %d)", i, len(t[i].super), ErrTooLarge, sl.indxCap)
			}
			buf = appendSuperIndex(buf[:0], sl.id, t[i].super)
			if err := writeAt(ws, sl.indx, buf); err != nil {
				return err
			}
		}
	}
	var frames, first int64
	if v := l.video(); v >= 0 {
		frames, first = t[v].count, t[v].firstCount
	}
	putLE32(b[0:], uint32(float64(bytes)/max(seconds, 1e-3)))
	if err := writeAt(ws, l.avih+avihMaxBytesPerSec, b[:4]); err != nil {
		return err
	}
	putLE32(b[0:], uint32(first))
	if err := writeAt(ws, l.avih+avihTotalFrames, b[:4]); err != nil {
		return err
	}
	putLE32(b[0:], maxChunk+chunkHeaderSize)
	if err := writeAt(ws, l.avih+avihSuggestedBuffer, b[:4]); err != nil {
		return err
	}
	if l.dmlh >= 0 {
		putLE32(b[0:], uint32(frames))
		if err := writeAt(ws, l.dmlh, b[:4]); err != nil {
			return err
		}
	}
	_, err := ws.Seek(end, io.SeekStart)
	return err
}

// video returns the index of the first video stream, or -1.
func (l *layout) video() int {
	for i, sl := range l.streams {
		if sl.video {
			return i
		}
	}
	return -1
}

// chunkSeconds is the duration of n chunks of a stream.
func chunkSeconds(t totals, n int64) float64 {
	if t.rate == 0 {
		return 0
	}
	return float64(n) * float64(t.scale) / float64(t.rate)
}

// microSecPerFrame is avih's frame duration.
func microSecPerFrame(t totals) uint32 {
	if t.rate == 0 {
		return 0
	}
	return uint32(uint64(t.scale) * 1e6 / uint64(t.rate))
}
