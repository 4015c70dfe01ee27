package srt

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/sluicemedia/sluice/internal/redact"

	"github.com/sluicemedia/sluice/protocols/srt/link"
)

// target is the peer a Pull or a Send talks to: its URL (as given, and parsed), the URL with
// its secrets hidden for logs and errors, and the log narrowed to it.
type target struct {
	op    string // "pull" or "send", for errors and the log attribute
	raw   string
	ep    Endpoint
	where string
	log   *slog.Logger
}

// newTarget parses rawurl for op; a nil log is slog.Default().
func newTarget(op, rawurl string, log *slog.Logger) (target, error) {
	if log == nil {
		log = slog.Default()
	}
	ep, err := ParseURL(rawurl)
	if err != nil {
		return target{}, fmt.Errorf("srt %s: %w", op, err)
	}
	where := shown(rawurl)
	return target{op: op, raw: rawurl, ep: ep, where: where, log: log.With("srt_"+op, where)}, nil
}

// wrap says which operation on which peer err comes from, without the URL's secrets.
func (t target) wrap(err error) error {
	return fmt.Errorf("srt %s %s: %w", t.op, t.where, redact.Error(err, hashInQuery(t.raw)))
}

// config is the link configuration of the target: its URL's options and log, and for a
// rendezvous without conntimeo, DefaultRendezvousTimeout.
func (t target) config() (link.Config, error) {
	conf, err := t.ep.config()
	if err != nil {
		return link.Config{}, err
	}
	conf.Log = t.log
	if t.ep.Rendezvous && t.ep.ConnectTimeout == 0 {
		conf.ConnectTimeout = DefaultRendezvousTimeout
	}
	return conf, nil
}

// call connects to the peer (as a caller, or in rendezvous) and runs fn on the connection,
// which probe reports meanwhile; the connection is closed when fn returns.
func (t target) call(ctx context.Context, probe *Probe, fn func(conn *link.Conn) error) error {
	conf, err := t.config()
	if err != nil {
		return err
	}
	var conn *link.Conn
	if t.ep.Rendezvous {
		conn, err = link.Rendezvous(ctx, t.ep.Local, t.ep.Addr, conf)
	} else {
		conn, err = link.Dial(ctx, t.ep.Addr, conf)
	}
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	defer probe.track(conn)()
	return fn(conn)
}
