package udp

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"syscall"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/redact"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/packager/mpegts"
	"github.com/sluicemedia/sluice/protocols/internal/tsmux"
)

// DefaultPktSize is the MPEG-TS payload of a datagram: 7 packets, 1316 bytes, which with
// the IP, UDP (and RTP) headers fits an Ethernet MTU.
const DefaultPktSize = 7 * mpegts.PacketSize

// rtpPayloadMP2T is the static RTP payload type of MPEG-TS (RFC 3551).
const rtpPayloadMP2T = 33

// Send muxes the reader's units into MPEG-TS and sends it to a udp:// URL
// (OUTPUT_TYPE_UDP_URL) in datagrams of 7×188 bytes, paced by the units' timestamps: each
// unit's datagrams leave at its DTS relative to a wall-clock anchor, spread until the next
// unit is due, so the stream goes out at its own rate without bursts. Options in the query:
//
//	pkt_size=N        TS bytes per datagram, a multiple of 188 (default 1316)
//	ttl=N             multicast TTL (default 16, as ffmpeg)
//	localaddr=IP      source address; for multicast also the outgoing interface
//	interface=NAME    outgoing interface of multicast
//
// Other options (ffmpeg's localport, bitrate, ...) are logged as ignored.
//
// tracks are the stream's tracks when the reader was opened; at a discontinuity with other
// tracks the muxer starts over with new tables. Timestamps keep increasing across
// discontinuities. Send returns nil when ctx ends or the stream closes, else the error.
func Send(ctx context.Context, r *stream.Reader, tracks []media.Track, opts SendOptions) error {
	return send(ctx, opts.URL, "udp", r, tracks, opts)
}

// SendRTP is Send for rtp:// URLs (OUTPUT_TYPE_RTP_URL): the same datagrams behind a 12-byte
// RTP header (RFC 2250): version 2, payload type 33, consecutive sequence numbers, a 90 kHz
// timestamp from the units' DTS, and one random SSRC. No RTCP is sent.
func SendRTP(ctx context.Context, r *stream.Reader, tracks []media.Track, opts SendOptions) error {
	return send(ctx, opts.URL, "rtp", r, tracks, opts)
}

func send(ctx context.Context, rawurl, scheme string, r *stream.Reader, tracks []media.Track, opts SendOptions) error {
	opts = opts.withDefaults()
	ep, err := parseURL(rawurl, scheme)
	if err != nil {
		return fmt.Errorf("%s send: %w", scheme, err)
	}
	where := redact.URL(rawurl)
	conn, err := dialEndpoint(ctx, ep)
	if err != nil {
		return fmt.Errorf("%s send %s: %w", scheme, where, err)
	}
	defer conn.Close()
	log := opts.Log.With("output", scheme, "url", where)
	out, err := tsmux.New(r, tracks, log)
	if err != nil {
		return fmt.Errorf("%s send %s: %w", scheme, where, err)
	}
	d := &datagrams{conn: conn, log: log, size: ep.pktSize, rtp: scheme == "rtp"}
	if d.size == 0 {
		d.size = DefaultPktSize
	}
	if d.rtp {
		d.seq, d.ssrc, d.ts0 = uint16(rand.Uint32()), rand.Uint32(), rand.Uint32()
	}
	log.Info("sending", "remote", conn.RemoteAddr().String(), "pkt_size", d.size)
	if ignored := ep.unused("pkt_size", "ttl", "localaddr", "interface"); ignored != nil {
		log.Info("options ignored: they change nothing on a "+scheme+" output", "options", ignored)
	}
	err = d.run(ctx, out)
	if err != nil {
		return fmt.Errorf("%s send %s: %w", scheme, where, err)
	}
	return nil
}

// dialEndpoint opens a socket connected to the endpoint, set up for multicast when the
// address is a group.
func dialEndpoint(ctx context.Context, ep endpoint) (*net.UDPConn, error) {
	if ep.host == "" {
		return nil, fmt.Errorf("no destination host")
	}
	var dialer net.Dialer
	if ep.localAddr != nil {
		dialer.LocalAddr = &net.UDPAddr{IP: ep.localAddr}
	}
	if ep.multicast() {
		ttl := ep.ttl
		if ttl < 0 {
			ttl = defaultTTL
		}
		var ifAddr net.IP
		if ep.localAddr != nil {
			ifAddr = ep.localAddr
		} else if ep.iface != "" {
			ifi, err := ep.interfaceOf()
			if err != nil {
				return nil, err
			}
			if ifAddr, err = ifaceIPv4(ifi); err != nil {
				return nil, err
			}
		}
		dialer.Control = multicastControl(ifAddr, ttl)
	}
	c, err := dialer.DialContext(ctx, "udp", net.JoinHostPort(ep.host, fmt.Sprint(ep.port)))
	if err != nil {
		return nil, err
	}
	return c.(*net.UDPConn), nil
}

// datagrams cuts the muxed stream into datagrams and sends them on time.
type datagrams struct {
	conn *net.UDPConn
	log  *slog.Logger
	size int // TS bytes per datagram
	rtp  bool
	seq  uint16
	ssrc uint32
	ts0  uint32

	pace    pacer
	buf     []byte // muxed bytes not yet sent: whole datagrams of the pending unit, then a partial one
	pendAt  time.Time
	pend90  int64
	hasPend bool
	pkt     []byte // scratch: RTP header and payload
	refused int64
}

// run sends the muxed units until ctx ends or the stream closes.
func (d *datagrams) run(ctx context.Context, out *tsmux.Muxer) error {
	return out.Run(ctx, d.buf, func(buf []byte, dts90 int64, au *media.AccessUnit) ([]byte, error) {
		// The pending unit's datagrams go out until this unit is due.
		n := len(d.buf)
		d.buf = buf
		at := d.pace.due(dts90, au.Arrival, time.Now())
		if d.hasPend {
			if err := d.flush(ctx, n, at); err != nil {
				return nil, err
			}
		}
		d.pendAt, d.pend90, d.hasPend = at, dts90, true
		return d.buf, nil
	})
}

// flush sends the whole datagrams in the first n bytes of buf, those of the pending unit,
// spread from its due time until next, and keeps the rest.
func (d *datagrams) flush(ctx context.Context, n int, next time.Time) error {
	count := n / d.size
	for i := range count {
		if !d.pace.sleepUntil(ctx, spread(d.pendAt, next, i, count)) {
			return nil
		}
		if err := d.write(d.buf[i*d.size : (i+1)*d.size]); err != nil {
			return err
		}
	}
	d.buf = d.buf[:copy(d.buf, d.buf[count*d.size:])]
	return nil
}

// write sends one datagram, behind an RTP header in RTP mode. A refused datagram (no
// receiver yet on a unicast port) is counted, not an error.
func (d *datagrams) write(ts []byte) error {
	p := ts
	if d.rtp {
		d.pkt = append(d.pkt[:0], 0x80, rtpPayloadMP2T)
		d.pkt = binary.BigEndian.AppendUint16(d.pkt, d.seq)
		d.pkt = binary.BigEndian.AppendUint32(d.pkt, d.ts0+uint32(d.pend90))
		d.pkt = binary.BigEndian.AppendUint32(d.pkt, d.ssrc)
		d.pkt = append(d.pkt, ts...)
		d.seq++
		p = d.pkt
	}
	_, err := d.conn.Write(p)
	if errors.Is(err, syscall.ECONNREFUSED) {
		if d.refused == 0 {
			d.log.Warn("datagrams refused: nothing listens at the destination yet")
		}
		d.refused++
		return nil
	}
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}
