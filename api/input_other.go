package api

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/sluicemedia/sluice/internal/kinds"
)

// DefaultInputSchemes are the ffmpeg protocols an INPUT_TYPE_OTHER address may name unless the
// operator configures others (--input-schemes): the network media protocols a server pulls
// from. Not by default: file-like ones that read the server's own files or descriptors (file,
// pipe, fd, cache, async, concat, concatf, subfile, data, unix), raw transports (tcp, tls, udplite,
// sctp) and the odd ones (gopher, gophers, ftp, sftp, amqp, zmq, ipfs, ipns, hls, crypto, mmsh,
// mmst, rist, srtp).
var DefaultInputSchemes = []string{"http", "https", "rtmp", "rtmps", "rtmpt", "rtmpts", "rtsp", "rtsps", "srt", "udp", "rtp"}

// InputPolicy says which addresses an INPUT_TYPE_OTHER input may have.
type InputPolicy struct {
	// Schemes are the ffmpeg protocols allowed, lower case; nil means DefaultInputSchemes.
	Schemes []string
	// AllowLocalFiles lets the address be a path on the server or a file: URL. Default false.
	AllowLocalFiles bool
}

// maxNesting bounds how deep protocols may wrap other addresses (crypto+, cache:, concat:...).
const maxNesting = 4

// schemeChars are the characters ffmpeg reads as a protocol name before ':'.
const schemeChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-."

// schemeName is a scheme the operator may allow: one protocol name, without nesting.
var schemeName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{0,31}$`)

// neverSchemes read what the server process holds, not media from elsewhere: not allowed even
// when configured (file: comes with --allow-local-files).
var neverSchemes = []string{"file", "pipe", "fd"}

// urlSchemes are network protocols whose addresses are scheme://host...; a form without the
// "//" is refused (ffmpeg would fail or read it differently).
var urlSchemes = []string{"http", "https", "rtmp", "rtmps", "rtmpt", "rtmpts", "rtmpe", "rtmpte", "rtsp", "rtsps",
	"srt", "udp", "rtp", "srtp", "tcp", "tls", "udplite", "sctp", "rist", "ftp", "sftp", "gopher", "gophers",
	"mmsh", "mmst", "amqp", "zmq", "ipfs", "ipns"}

// CheckInputSchemes refuses a configured scheme list that names something other than plain
// protocol names, or a protocol that reads the server's files or descriptors.
func CheckInputSchemes(schemes []string) error {
	for _, s := range schemes {
		switch {
		case !schemeName.MatchString(s):
			return fmt.Errorf("input scheme %q: want a protocol name such as http or srt (lower case, no '+' or ':')", s)
		case s == "file":
			return errors.New("input scheme \"file\": local files are allowed with --allow-local-files, not as a scheme")
		case slices.Contains(neverSchemes, s):
			return fmt.Errorf("input scheme %q reads the server's own descriptors and cannot be allowed", s)
		}
	}
	return nil
}

func (p *InputPolicy) schemes() []string {
	if p == nil || p.Schemes == nil {
		return DefaultInputSchemes
	}
	return p.Schemes
}

// Check returns why ffmpeg must not be given address as an INPUT_TYPE_OTHER input, or nil. It
// reads the address as ffmpeg does (libavformat's url_find_protocol): a protocol name of
// schemeChars then ':' (or ffmpeg's "subfile,<options>:" form), and otherwise a local path. A
// protocol nested with '+' (crypto+file:) needs every name allowed, and the addresses a protocol
// wraps (cache:, async:, crypto:, concat:a|b, concatf:, subfile,...:) are checked in turn.
func (p *InputPolicy) Check(address string) error {
	if strings.HasPrefix(strings.TrimSpace(address), "-") {
		return errors.New("must not start with '-' (ffmpeg would read it as an option)")
	}
	return p.check(address, 0)
}

func (p *InputPolicy) check(address string, depth int) error {
	if depth > maxNesting {
		return fmt.Errorf("nests protocols more than %d deep", maxNesting)
	}
	if strings.TrimSpace(address) == "" {
		return errors.New("names an empty address inside a protocol")
	}
	allowLocal := p != nil && p.AllowLocalFiles
	n := strings.IndexFunc(address, func(r rune) bool { return !strings.ContainsRune(schemeChars, r) })
	var scheme, rest string
	switch {
	case n > 0 && address[n] == ':':
		scheme, rest = address[:n], address[n+1:]
	case strings.HasPrefix(address, "subfile,") && strings.Contains(address[len("subfile,"):], ":"):
		// subfile,,start,N,end,M,,:<address>
		scheme, rest = "subfile", address[strings.Index(address, ":")+1:]
	case n == 0 && address[0] == ':':
		return errors.New("has an empty protocol name before ':'")
	default:
		if !allowLocal {
			return errors.New("is a path on the server; ffmpeg would read a local file (the operator allows that with --allow-local-files)")
		}
		return nil
	}
	name := strings.ToLower(scheme)
	if name == "file" {
		if !allowLocal {
			return errors.New("uses file:, which reads a file on the server (the operator allows that with --allow-local-files)")
		}
		return nil
	}
	outer, _, isNested := strings.Cut(name, "+")
	if !slices.Contains(p.schemes(), outer) {
		return fmt.Errorf("uses protocol %q, which this server does not allow for %s (allowed: %s; the operator sets --input-schemes)",
			outer, kinds.InputOther, strings.Join(p.schemes(), ", "))
	}
	if isNested {
		// ffmpeg opens the rest with the inner protocol: crypto+http://... reads http://...
		return p.check(scheme[len(outer)+1:]+":"+rest, depth+1)
	}
	switch name {
	case "cache", "async", "crypto", "concatf", "subfile":
		return p.check(rest, depth+1)
	case "concat":
		for part := range strings.SplitSeq(rest, "|") {
			if err := p.check(part, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if slices.Contains(urlSchemes, name) && !strings.HasPrefix(rest, "//") {
		return fmt.Errorf("must be a %s://host... address", name)
	}
	return nil
}
