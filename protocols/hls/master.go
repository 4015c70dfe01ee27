package hls

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/bluenviron/gohlslib/v2/pkg/playlist"
	"github.com/bluenviron/gohlslib/v2/pkg/playlist/primitives"
	"github.com/sluicemedia/sluice/protocols/internal/httpget"
)

// errNoVariant is returned for a multivariant playlist without a playable variant.
var errNoVariant = errors.New("no variant with supported codecs (H.264, H.265, AAC, MP3, Opus)")

// errEmpty is returned for a playlist that lists no segment and no variant (a live origin
// that has just started, or restarted).
var errEmpty = errors.New("the playlist lists no segment and no variant yet")

// maxPlaylistBytes bounds the m3u8 parsePlaylist accepts.
const maxPlaylistBytes = 4 << 20

// parsePlaylist parses an m3u8 with gohlslib's parser. It refuses what it cannot read, and
// recovers from a panic of the parser, which must never take the server down.
func parsePlaylist(b []byte) (pl playlist.Playlist, err error) {
	if len(b) > maxPlaylistBytes {
		return nil, fmt.Errorf("playlist of %d bytes: %w", len(b), httpget.ErrTooLarge)
	}
	b = trimHead(b)
	if !bytes.HasPrefix(b, []byte("#EXTM3U")) {
		return nil, fmt.Errorf("not an m3u8 playlist (it starts with %q)", b[:min(len(b), 16)])
	}
	if !bytes.Contains(b, []byte("#EXTINF:")) && !bytes.Contains(b, []byte("#EXT-X-STREAM-INF:")) {
		return nil, errEmpty
	}
	// The parser refuses an EXT-X-PROGRAM-DATE-TIME without a time zone, which RFC 8216
	// allows (it SHOULD have one); sluice does not read the tag, so it goes.
	b = dropTag(b, "#EXT-X-PROGRAM-DATE-TIME:")
	defer func() {
		if r := recover(); r != nil {
			pl, err = nil, fmt.Errorf("invalid playlist: %v", r)
		}
	}()
	if pl, err = playlist.Unmarshal(b); err != nil {
		if m := keyMethod(b); m != "" {
			// The parser knows only AES-128 and SAMPLE-AES: say what matters first.
			return nil, fmt.Errorf("%w (METHOD=%.20s)", errEncrypted, m)
		}
		return nil, fmt.Errorf("invalid m3u8: %w", err)
	}
	return pl, nil
}

// supported tells whether every codec of a CODECS attribute is one sluice carries: H.264,
// H.265, AAC, MP3 and Opus. A variant without CODECS is tried.
func supported(codecs []string) bool {
	for _, c := range codecs {
		c = strings.ToLower(strings.TrimSpace(c))
		switch {
		case strings.HasPrefix(c, "avc1"), strings.HasPrefix(c, "avc3"),
			strings.HasPrefix(c, "hvc1"), strings.HasPrefix(c, "hev1"),
			strings.HasPrefix(c, "mp4a"), c == "opus", c == "mp3":
		default:
			return false
		}
	}
	return true
}

// choice is what a multivariant playlist resolves to: the variant's media playlist and, when
// its audio comes from a separate rendition, that rendition's playlist.
type choice struct {
	variant *playlist.MultivariantVariant
	audio   string // URI of the audio rendition's media playlist; "" when muxed in the variant
}

// pickVariant chooses the variant with the highest BANDWIDTH among those with supported
// codecs (the first on a tie, as gohlslib does) and its audio rendition: the group's DEFAULT
// one, else its AUTOSELECT one, else its first.
func pickVariant(m *playlist.Multivariant) (choice, error) {
	var best *playlist.MultivariantVariant
	for _, v := range m.Variants {
		if supported(v.Codecs) && (best == nil || v.Bandwidth > best.Bandwidth) {
			best = v
		}
	}
	if best == nil {
		var seen []string
		for _, v := range m.Variants {
			if c := strings.Join(v.Codecs, ","); !slices.Contains(seen, c) && len(seen) < 8 {
				seen = append(seen, c)
			}
		}
		return choice{}, fmt.Errorf("%w; the variants have CODECS %.200q", errNoVariant, strings.Join(seen, " | "))
	}
	c := choice{variant: best}
	if best.Audio == "" {
		return c, nil
	}
	var pick *playlist.MultivariantRendition
	for _, r := range m.Renditions {
		if r.Type != playlist.MultivariantRenditionTypeAudio || r.GroupID != best.Audio {
			continue
		}
		switch {
		case pick == nil,
			r.Default && !pick.Default,
			r.Autoselect && !pick.Autoselect && !pick.Default:
			pick = r
		}
	}
	if pick != nil && pick.URI != nil && *pick.URI != best.URI {
		c.audio = *pick.URI
	}
	return c, nil
}

// trimHead drops what some origins send before #EXTM3U, which the parser wants on the first
// line: a byte-order mark, blank lines.
func trimHead(b []byte) []byte {
	return bytes.TrimLeft(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")), " \t\r\n")
}

// segmentMaps returns the EXT-X-MAP in force at each segment of media playlist b, in order.
// gohlslib keeps only the playlist's last EXT-X-MAP, but a map may change mid-playlist (a new
// init segment after a discontinuity, RFC 8216 4.3.2.5). Segments are counted as the parser
// counts them: every line that is neither empty nor a tag or comment.
func segmentMaps(b []byte) []*playlist.MediaMap {
	var maps []*playlist.MediaMap
	var cur *playlist.MediaMap
	for line := range bytes.Lines(trimHead(b)) {
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case bytes.HasPrefix(line, []byte("#EXT-X-MAP:")):
			cur = parseMap(string(line[len("#EXT-X-MAP:"):]))
		case len(line) > 0 && line[0] != '#':
			maps = append(maps, cur)
		}
	}
	return maps
}

// parseMap reads the attributes of an EXT-X-MAP tag; nil when they are unreadable.
func parseMap(v string) *playlist.MediaMap {
	var attrs primitives.Attributes
	if attrs.Unmarshal(v) != nil || attrs["URI"] == "" {
		return nil
	}
	m := &playlist.MediaMap{URI: attrs["URI"]}
	if v, ok := attrs["BYTERANGE"]; ok {
		var br primitives.ByteRange
		if br.Unmarshal(v) != nil {
			return nil
		}
		m.ByteRangeLength, m.ByteRangeStart = &br.Length, br.Start
	}
	return m
}

// keyMethod returns the METHOD of the first EXT-X-KEY of playlist b that encrypts, or "".
func keyMethod(b []byte) string {
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("#EXT-X-KEY:")); ok {
			var attrs primitives.Attributes
			if attrs.Unmarshal(string(v)) == nil && attrs["METHOD"] != "" && attrs["METHOD"] != "NONE" {
				return attrs["METHOD"]
			}
		}
	}
	return ""
}

// dropTag returns playlist b without the lines that start with tag.
func dropTag(b []byte, tag string) []byte {
	if !bytes.Contains(b, []byte(tag)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for line := range bytes.Lines(b) {
		if !bytes.HasPrefix(line, []byte(tag)) {
			out = append(out, line...)
		}
	}
	return out
}
