package hls

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/bluenviron/gohlslib/v2/pkg/playlist"
	"github.com/sluicemedia/sluice/protocols/internal/httpget"
)

// errNoVariant is returned for a multivariant playlist without a playable variant.
var errNoVariant = errors.New("no variant with supported codecs")

// maxPlaylistBytes bounds the m3u8 parsePlaylist accepts.
const maxPlaylistBytes = 4 << 20

// parsePlaylist parses an m3u8 with gohlslib's parser. It refuses what it cannot read, and
// recovers from a panic of the parser, which must never take the server down.
func parsePlaylist(b []byte) (pl playlist.Playlist, err error) {
	if len(b) > maxPlaylistBytes {
		return nil, fmt.Errorf("playlist of %d bytes: %w", len(b), httpget.ErrTooLarge)
	}
	if t := bytes.TrimLeft(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")), " \t\r\n"); !bytes.HasPrefix(t, []byte("#EXTM3U")) {
		return nil, fmt.Errorf("not an m3u8 playlist (it starts with %q)", t[:min(len(t), 16)])
	}
	defer func() {
		if r := recover(); r != nil {
			pl, err = nil, fmt.Errorf("invalid playlist: %v", r)
		}
	}()
	if pl, err = playlist.Unmarshal(b); err != nil {
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
		return choice{}, errNoVariant
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
