// Package redact is the one rule for showing an address in a log line, an error message or an
// event: the secrets an address may carry (a password in its user information, tokens and
// signatures in its query, SRT's passphrase, an RTMP stream key) are replaced, what an
// operator needs to tell one address from another is kept. It imports only the standard
// library, so that every package may use it. The rules are in docs/decisions.md ("Addresses
// in logs and errors").
package redact

import (
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Placeholder replaces every hidden value: a query value, a fragment, an RTMP stream key. It
// needs no escaping in a path or a query.
const Placeholder = "REDACTED"

// Unparsable is shown for the whole of an address that does not parse as a URL: its parts
// cannot be told apart, so none of it is shown.
const Unparsable = "(unparsable URL)"

// minSecret is the shortest secret Error and Text look for in free text on their own (beside
// the whole address): a shorter one would blank out common words of a message.
const minSecret = 4

// shownKeys are the query keys whose values are shown in full: settings, never credentials.
// Every other key keeps its name and loses its value.
var shownKeys = []string{
	// SRT (libsrt and ffmpeg names): the stream id names the stream, not the caller.
	"streamid", "srt_streamid", "mode", "latency", "rcvlatency", "peerlatency", "transtype",
	"payloadsize", "pkt_size", "pbkeylen", "conntimeo", "peeridletimeo",
	// RTSP's transport, an HTTP output's method, UDP's time to live and bound address.
	"rtsp_transport", "transport", "method", "ttl", "localaddr", "localport",
}

// Option hides more than the rules do.
type Option uint8

const (
	// NoUser drops the user name as well as the password.
	NoUser Option = 1 << iota
	// StreamKey hides the path after its first element: an RTMP URL's stream name (and
	// whatever follows the application), which is the stream key. A path of one element, the
	// application alone, is shown.
	StreamKey
)

func has(opts []Option, o Option) bool {
	for _, x := range opts {
		if x&o != 0 {
			return true
		}
	}
	return false
}

// URL returns raw as it may be shown: the password of its user information dropped (the user
// name kept), every query value replaced by Placeholder but those of a few settings (the keys
// are kept: that a token was given is worth knowing), the fragment replaced, and what opts
// add. An address that does not parse is Unparsable; the empty string stays empty.
func URL(raw string, opts ...Option) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Unparsable
	}
	return Parsed(u, opts...)
}

// Parsed is URL for an address already parsed; nil is Unparsable.
func Parsed(u *url.URL, opts ...Option) string {
	if u == nil {
		return Unparsable
	}
	c := *u
	if c.User != nil {
		if name := c.User.Username(); name != "" && !has(opts, NoUser) {
			c.User = url.User(name)
		} else {
			c.User = nil
		}
	}
	if c.Opaque != "" {
		c.Opaque = opaque(c.Opaque, opts)
	}
	if has(opts, StreamKey) {
		if app, name, _ := strings.Cut(strings.TrimPrefix(c.Path, "/"), "/"); name != "" {
			c.Path, c.RawPath = "/"+app+"/"+Placeholder, ""
		}
	}
	c.RawQuery = query(c.RawQuery)
	if c.Fragment != "" || c.RawFragment != "" {
		c.Fragment, c.RawFragment = Placeholder, ""
	}
	return c.String()
}

// opaque is the opaque part of a URL (scheme:user:password@host...) without the password, or
// the user information when opts say so.
func opaque(s string, opts []Option) string {
	at := strings.LastIndex(s, "@")
	if at < 0 {
		return s
	}
	name, _, _ := strings.Cut(s[:at], ":")
	if name == "" || has(opts, NoUser) {
		return s[at+1:]
	}
	return name + s[at:]
}

// query is a raw query with every value hidden but those of shownKeys. Both "&" and ";"
// separate pairs (some servers read ";"), so that a hidden pair cannot hide behind a shown
// one. A part without "=" is a value of its own, hidden unless it is a shown key's name.
func query(raw string) string {
	if raw == "" {
		return ""
	}
	var b strings.Builder
	for len(raw) > 0 {
		i := strings.IndexAny(raw, "&;")
		part, sep := raw, ""
		if i >= 0 {
			part, sep, raw = raw[:i], raw[i:i+1], raw[i+1:]
		} else {
			raw = ""
		}
		b.WriteString(pair(part))
		b.WriteString(sep)
	}
	return b.String()
}

func pair(part string) string {
	k, v, eq := strings.Cut(part, "=")
	switch {
	case part == "", shown(k):
		return part
	case !eq:
		return Placeholder
	case v == "":
		return part
	}
	return k + "=" + Placeholder
}

// shown tells whether a raw query key is one of shownKeys.
func shown(k string) bool {
	key, err := url.QueryUnescape(k)
	return err == nil && slices.Contains(shownKeys, key)
}

// secrets are the parts of raw that URL hides, as written and decoded.
func secrets(raw string, opts []Option) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var out []string
	add := func(written string, decode func(string) (string, error)) {
		out = append(out, written)
		if d, err := decode(written); err == nil && d != written {
			out = append(out, d)
		}
	}
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
			if s := u.User.String(); strings.Contains(s, ":") {
				_, w, _ := strings.Cut(s, ":")
				out = append(out, w)
			}
		}
		if has(opts, NoUser) {
			out = append(out, u.User.Username())
		}
	}
	if u.Opaque != "" {
		if at := strings.LastIndex(u.Opaque, "@"); at >= 0 {
			name, pass, _ := strings.Cut(u.Opaque[:at], ":")
			add(pass, url.PathUnescape)
			if has(opts, NoUser) {
				add(name, url.PathUnescape)
			}
		}
	}
	if has(opts, StreamKey) {
		esc := strings.TrimPrefix(u.EscapedPath(), "/")
		if _, name, _ := strings.Cut(esc, "/"); name != "" {
			add(name, url.PathUnescape)
		}
	}
	rest := u.RawQuery
	for rest != "" {
		var part string
		if i := strings.IndexAny(rest, "&;"); i >= 0 {
			part, rest = rest[:i], rest[i+1:]
		} else {
			part, rest = rest, ""
		}
		k, v, eq := strings.Cut(part, "=")
		if part == "" || shown(k) {
			continue
		}
		if !eq {
			v = k
		}
		add(v, url.QueryUnescape)
	}
	if u.Fragment != "" {
		add(u.EscapedFragment(), url.PathUnescape)
		out = append(out, u.Fragment)
	}
	return out
}

// Text returns s, free text such as a child process's output, with raw replaced by URL(raw,
// opts...) wherever it appears (as written or quoted), and then every secret URL hides (a
// password, a query value, a stream key) of minSecret bytes or more replaced by Placeholder
// wherever it appears on its own.
func Text(s, raw string, opts ...Option) string {
	if raw == "" || s == "" {
		return s
	}
	s = replaceAddr(s, raw, URL(raw, opts...))
	for _, sec := range secrets(raw, opts) {
		if len(sec) >= minSecret {
			s = strings.ReplaceAll(s, sec, Placeholder)
		}
	}
	return s
}

// replaceAddr replaces raw in s by shown, as written and as %q quotes it (url.Error does).
func replaceAddr(s, raw, shown string) string {
	s = strings.ReplaceAll(s, raw, shown)
	if q := strconv.Quote(raw); q[1:len(q)-1] != raw {
		s = strings.ReplaceAll(s, q[1:len(q)-1], shown)
	}
	return s
}

// Error returns err with its text redacted: the address of every *url.Error it wraps
// (net/http's and url.Parse's errors repeat the whole URL, query included) and raw, as Text
// does. The result unwraps to err, so errors.Is and errors.As answer as they did; err itself
// is returned when its text held nothing to hide, and nil stays nil.
func Error(err error, raw string, opts ...Option) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	out := msg
	var addrs []string
	walk(err, func(e error) {
		var ue *url.Error
		if errors.As(e, &ue) && ue.URL != "" && !slices.Contains(addrs, ue.URL) {
			addrs = append(addrs, ue.URL)
		}
	})
	for _, a := range addrs {
		out = replaceAddr(out, a, URL(a, opts...))
	}
	out = Text(out, raw, opts...)
	for _, a := range addrs {
		for _, sec := range secrets(a, opts) {
			if len(sec) >= minSecret {
				out = strings.ReplaceAll(out, sec, Placeholder)
			}
		}
	}
	if out == msg {
		return err
	}
	return &redacted{msg: out, err: err}
}

// Hide returns err with each of secrets of minSecret bytes or more replaced by Placeholder in
// its text: for a secret given apart from an address (an RTMP stream key in a field of its
// own). As with Error, the result unwraps to err, and err itself comes back when its text
// held none of them.
func Hide(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	out := msg
	for _, sec := range secrets {
		if len(sec) >= minSecret {
			out = strings.ReplaceAll(out, sec, Placeholder)
		}
	}
	if out == msg {
		return err
	}
	return &redacted{msg: out, err: err}
}

// walk calls f on err and every error it wraps, joined errors included.
func walk(err error, f func(error)) {
	for err != nil {
		f(err)
		// Every node is looked at, not only the first match errors.As would give.
		switch w := any(err).(type) {
		case interface{ Unwrap() []error }:
			for _, e := range w.Unwrap() {
				walk(e, f)
			}
			return
		case interface{ Unwrap() error }:
			err = w.Unwrap()
		default:
			return
		}
	}
}

// redacted is an error whose text had secrets taken out; it unwraps to the original.
type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }
