// Package ffin is INPUT_TYPE_OTHER: any address ffmpeg can open, remuxed by ffmpeg (-c copy)
// into MPEG-TS on a pipe and published.
package ffin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/sluicemedia/sluice/internal/opt"
	"github.com/sluicemedia/sluice/internal/redact"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/protocols/internal/ingest"
)

// RWTimeout is ffmpeg's I/O timeout (-rw_timeout) for network addresses: a source that sends
// nothing for this long ends the run with an error.
const RWTimeout = 10 * time.Second

// ErrBadAddress is returned for an address ffmpeg must not be given.
var ErrBadAddress = errors.New("bad input address")

// checkAddress refuses addresses that ffmpeg would read as an option, and empty ones.
func checkAddress(address string) error {
	switch {
	case strings.TrimSpace(address) == "":
		return fmt.Errorf("%w: empty", ErrBadAddress)
	case strings.HasPrefix(address, "-"):
		return fmt.Errorf("%w: %q starts with '-'", ErrBadAddress, redact.URL(address))
	case strings.ContainsAny(address, "\x00\r\n"):
		return fmt.Errorf("%w: %q holds a control character", ErrBadAddress, redact.URL(address))
	}
	return nil
}

// network tells whether an address is a URL of a network protocol, rather than a local file
// (a path or file:).
func network(address string) bool {
	i := strings.Index(address, "://")
	if i <= 0 {
		return false
	}
	scheme := strings.ToLower(address[:i])
	for _, c := range scheme {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return scheme != "file"
}

// Args returns ffmpeg's arguments for an address: no stdin, errors only; for a network
// address an I/O timeout (-rw_timeout, RWTimeout); for a local file native-rate reading (-re),
// so that a file plays as a live stream; then the default video and audio streams copied
// (-c copy) into MPEG-TS on stdout, flushed per packet. The address is one argument: no shell
// sees it. It must have passed checkAddress.
func Args(address string) []string {
	args := []string{"-nostdin", "-hide_banner", "-loglevel", "error"}
	if network(address) {
		args = append(args, "-rw_timeout", strconv.FormatInt(RWTimeout.Microseconds(), 10))
	} else {
		args = append(args, "-re")
	}
	return append(args, "-i", address, "-c", "copy", "-f", "mpegts", "-flush_packets", "1", "pipe:1")
}

// Options configure Run.
type Options struct {
	// FFmpeg is the ffmpeg program to run. Default: "ffmpeg" from PATH.
	FFmpeg string
	// Address is what ffmpeg opens (INPUT_TYPE_OTHER's URL or path).
	Address string
	// Log gets the input's messages. Default: slog.Default().
	Log *slog.Logger
}

// Run opens o.Address with o.FFmpeg and publishes what it reads into s until
// ffmpeg exits or ctx ends (nil: ffmpeg is stopped and its process group killed before Run
// returns). It returns nil when ffmpeg ended normally after media flowed, and an error when
// the address is refused (ErrBadAddress), ffmpeg fails (its last stderr lines quoted) or
// produced nothing to publish.
func Run(ctx context.Context, s *stream.Stream, o Options) error {
	address := o.Address
	if err := checkAddress(address); err != nil {
		return err
	}
	opt.Zero(&o.FFmpeg, "ffmpeg")
	opt.Zero(&o.Log, slog.Default())
	// ffmpeg's arguments hold the address, and its messages quote it (or its parts).
	hide := func(line string) string { return redact.Text(line, address) }
	log := o.Log.With("input", "other", "address", redact.URL(address))
	if err := ingest.RunPipe(ctx, o.FFmpeg, Args(address), s, log, false, hide); err != nil {
		return fmt.Errorf("ffmpeg input %q: %w", redact.URL(address), redact.Error(err, address))
	}
	return nil
}
