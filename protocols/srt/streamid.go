package srt

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Default stream id prefixes of the SRT server module.
const (
	DefaultPublisherPrefix = "publisher"
	DefaultReceiverPrefix  = "receiver"
)

// maxStreamIDLen is SRT's limit on the stream id (SRTO_STREAMID), in bytes.
const maxStreamIDLen = 512

// haivisionPrefix starts a stream id in the SRT Access Control syntax.
const haivisionPrefix = "#!::"

// Mode is what a caller wants to do with a stream.
type Mode uint8

// Modes of a stream id.
const (
	// ModePublish sends media to the server.
	ModePublish Mode = iota + 1
	// ModeRequest receives media from the server.
	ModeRequest
)

// String returns the mode as the SRT Access Control syntax spells it.
func (m Mode) String() string {
	switch m {
	case ModePublish:
		return "publish"
	case ModeRequest:
		return "request"
	}
	return "unknown"
}

// StreamID is a parsed SRT stream id.
type StreamID struct {
	Mode Mode
	// Name is the stream name: the registry key of the published stream.
	Name string
	// Server is the server slug the id names, already passed through Slug; empty when the id
	// names none (Haivision form, plain name).
	Server string
	// User is the u= key of the Haivision form, when given.
	User string
}

// Slug returns the form of a server name used in stream ids: lower case, spaces turned into
// "-".
func Slug(serverName string) string {
	return strings.ReplaceAll(strings.ToLower(serverName), " ", "-")
}

// ParseStreamID parses a stream id in one of the SRT server module's forms:
//
//   - "<publisherPrefix>/<server-slug>/<stream-name>": publish;
//   - "<receiverPrefix>/<server-slug>/<stream-name>": request;
//   - "#!::r=<stream-name>,m=publish" (or m=request; the keys u, s, h and t are tolerated,
//     other keys ignored; without m the mode is request, as the SRT Access Control spec says);
//   - a plain "<stream-name>" without "/": publish.
//
// Empty prefixes take the defaults ("publisher", "receiver"). The slug is compared by the
// caller; it is returned through Slug, so "Studio A" and "studio-a" are the same. An id is at
// most 512 bytes of valid UTF-8; names have no control characters, and no "/" except in the
// Haivision form's r= (where "live/cam1" is common).
func ParseStreamID(id, publisherPrefix, receiverPrefix string) (StreamID, error) {
	if publisherPrefix == "" {
		publisherPrefix = DefaultPublisherPrefix
	}
	if receiverPrefix == "" {
		receiverPrefix = DefaultReceiverPrefix
	}
	if len(id) > maxStreamIDLen {
		return StreamID{}, fmt.Errorf("stream id of %d bytes, over %d: %w", len(id), maxStreamIDLen, ErrInvalidStreamID)
	}
	if !utf8.ValidString(id) {
		return StreamID{}, fmt.Errorf("stream id %q is not UTF-8: %w", id, ErrInvalidStreamID)
	}
	if strings.HasPrefix(id, haivisionPrefix) {
		return parseHaivision(id)
	}
	parts := strings.SplitN(id, "/", 3)
	if len(parts) == 1 {
		if err := checkName(id, false); err != nil {
			return StreamID{}, err
		}
		return StreamID{Mode: ModePublish, Name: id}, nil
	}
	var sid StreamID
	switch parts[0] {
	case publisherPrefix:
		sid.Mode = ModePublish
	case receiverPrefix:
		sid.Mode = ModeRequest
	default:
		return StreamID{}, fmt.Errorf("stream id %q: want %s/<server>/<name> or %s/<server>/<name>: %w",
			id, publisherPrefix, receiverPrefix, ErrInvalidStreamID)
	}
	if len(parts) != 3 || parts[1] == "" {
		return StreamID{}, fmt.Errorf("stream id %q: want %s/<server>/<name>: %w", id, parts[0], ErrInvalidStreamID)
	}
	sid.Server, sid.Name = Slug(parts[1]), parts[2]
	if err := checkName(sid.Name, false); err != nil {
		return StreamID{}, err
	}
	return sid, nil
}

// parseHaivision parses "#!::key=value,key=value".
func parseHaivision(id string) (StreamID, error) {
	sid := StreamID{Mode: ModeRequest}
	var seen [256]bool
	body := id[len(haivisionPrefix):]
	if body == "" {
		return StreamID{}, fmt.Errorf("stream id %q has no keys: %w", id, ErrInvalidStreamID)
	}
	for kv := range strings.SplitSeq(body, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return StreamID{}, fmt.Errorf("stream id %q: %q is not key=value: %w", id, kv, ErrInvalidStreamID)
		}
		if len(k) == 1 {
			if seen[k[0]] {
				return StreamID{}, fmt.Errorf("stream id %q: key %q given twice: %w", id, k, ErrInvalidStreamID)
			}
			seen[k[0]] = true
		}
		switch k {
		case "r":
			sid.Name = v
		case "m":
			switch v {
			case "publish":
				sid.Mode = ModePublish
			case "request":
				sid.Mode = ModeRequest
			default:
				return StreamID{}, fmt.Errorf("stream id %q: mode %q, want publish or request: %w", id, v, ErrInvalidStreamID)
			}
		case "u":
			sid.User = v
		}
		// s (session), h (host), t (type) and custom keys carry nothing the server uses.
	}
	if sid.Name == "" {
		return StreamID{}, fmt.Errorf("stream id %q has no r=<stream-name>: %w", id, ErrInvalidStreamID)
	}
	if err := checkName(sid.Name, true); err != nil {
		return StreamID{}, err
	}
	return sid, nil
}

// checkName accepts a stream name: not empty, no control characters, and no "/" unless
// slash is true (the Haivision form's r= may be a path such as "live/cam1").
func checkName(name string, slash bool) error {
	if name == "" {
		return fmt.Errorf("empty stream name: %w", ErrInvalidStreamID)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || (r == '/' && !slash) || r == utf8.RuneError {
			return fmt.Errorf("stream name %q: character %q not allowed: %w", name, r, ErrInvalidStreamID)
		}
	}
	return nil
}
