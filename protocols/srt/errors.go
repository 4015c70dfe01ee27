package srt

import "errors"

// ErrInvalidStreamID is returned by ParseStreamID for a stream id none of the accepted forms
// matches.
var ErrInvalidStreamID = errors.New("invalid stream id")

// ErrInvalidURL is returned by ParseURL for an SRT URL or option it cannot use.
var ErrInvalidURL = errors.New("invalid srt url")

// ErrNoMedia is returned when a connection ended before any media flowed.
var ErrNoMedia = errors.New("no media received")

// ErrPeerClosed is returned when the peer closed the connection or stopped answering.
var ErrPeerClosed = errors.New("connection closed by peer")
