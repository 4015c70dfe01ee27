package player

import (
	"net/http"
	"path"
	"sync/atomic"
)

// Counters count what a player's files serve: playlist requests and response bytes. One
// atomic add per request and per response write, none per media unit.
type Counters struct {
	playlists, served atomic.Int64
}

// Playlists is the number of playlist and manifest requests served.
func (c *Counters) Playlists() int64 { return c.playlists.Load() }

// Served is the number of response bytes written.
func (c *Counters) Served() int64 { return c.served.Load() }

// count wraps w to count the bytes written, and counts r when it asks for a playlist.
func (c *Counters) count(w http.ResponseWriter, r *http.Request) http.ResponseWriter {
	switch path.Ext(r.URL.Path) {
	case ".m3u8", ".mpd":
		c.playlists.Add(1)
	}
	return &countingWriter{ResponseWriter: w, n: &c.served}
}

// countingWriter counts the bytes of a response.
type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// Unwrap lets http.ResponseController reach the connection.
func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
