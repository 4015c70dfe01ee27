package crypt

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// A tiny reader of the libpcap capture files under testdata/ (the classic format, not pcapng):
// a 24-byte file header, then records of a 16-byte header and the captured bytes.

type datagram struct {
	src, dst uint16 // UDP ports
	payload  []byte
}

// Link types of the captures a tshark on Linux writes.
const (
	linkEthernet = 1   // lo on Linux shows an Ethernet header of zeros
	linkRaw      = 101 // raw IPv4/IPv6
	linkSLL      = 113 // Linux "cooked" capture (-i any)
)

func readPcap(b []byte) ([]datagram, error) {
	if len(b) < 24 {
		return nil, fmt.Errorf("pcap: %d bytes, the file header is 24", len(b))
	}
	var bo binary.ByteOrder
	switch binary.LittleEndian.Uint32(b) {
	case 0xa1b2c3d4, 0xa1b23c4d: // microsecond and nanosecond timestamps
		bo = binary.LittleEndian
	case 0xd4c3b2a1, 0x4d3cb2a1:
		bo = binary.BigEndian
	default:
		return nil, fmt.Errorf("pcap: magic %#08x: not a libpcap file (pcapng is not read)", binary.LittleEndian.Uint32(b))
	}
	link := bo.Uint32(b[20:24]) & 0xFFFF
	var out []datagram
	for off := 24; off < len(b); {
		if len(b)-off < 16 {
			return nil, fmt.Errorf("pcap: record header at %d: %d bytes left", off, len(b)-off)
		}
		incl := int(bo.Uint32(b[off+8:]))
		off += 16
		if incl > len(b)-off {
			return nil, fmt.Errorf("pcap: record at %d: %d bytes captured, %d left", off, incl, len(b)-off)
		}
		frame := b[off : off+incl]
		off += incl
		ip, err := linkPayload(link, frame)
		if err != nil {
			return nil, err
		}
		if d, ok := udpOf(ip); ok {
			out = append(out, d)
		}
	}
	return out, nil
}

// linkPayload returns the IP packet in a link-layer frame; nil for a frame of another protocol.
func linkPayload(link uint32, f []byte) ([]byte, error) {
	switch link {
	case linkEthernet:
		if len(f) < 14 {
			return nil, nil
		}
		if et := binary.BigEndian.Uint16(f[12:14]); et != 0x0800 && et != 0x86DD {
			return nil, nil
		}
		return f[14:], nil
	case linkSLL:
		if len(f) < 16 {
			return nil, nil
		}
		return f[16:], nil
	case linkRaw:
		return f, nil
	}
	return nil, fmt.Errorf("pcap: link type %d not read (Ethernet, Linux SLL and raw IP are)", link)
}

// udpOf returns the UDP datagram in an IPv4 or IPv6 packet (IPv6 without extension headers).
func udpOf(ip []byte) (datagram, bool) {
	if len(ip) < 1 {
		return datagram{}, false
	}
	var udp []byte
	switch ip[0] >> 4 {
	case 4:
		if len(ip) < 20 {
			return datagram{}, false
		}
		ihl := int(ip[0]&0xF) * 4
		total := int(binary.BigEndian.Uint16(ip[2:4]))
		if ip[9] != 17 || ihl < 20 || total < ihl || total > len(ip) {
			return datagram{}, false
		}
		udp = ip[ihl:total]
	case 6:
		if len(ip) < 40 || ip[6] != 17 {
			return datagram{}, false
		}
		plen := int(binary.BigEndian.Uint16(ip[4:6]))
		if plen > len(ip)-40 {
			return datagram{}, false
		}
		udp = ip[40 : 40+plen]
	default:
		return datagram{}, false
	}
	if len(udp) < 8 {
		return datagram{}, false
	}
	ulen := int(binary.BigEndian.Uint16(udp[4:6]))
	if ulen < 8 || ulen > len(udp) {
		return datagram{}, false
	}
	return datagram{
		src:     binary.BigEndian.Uint16(udp[0:2]),
		dst:     binary.BigEndian.Uint16(udp[2:4]),
		payload: udp[8:ulen],
	}, true
}

// SRT packets, as far as these tests need them (draft-sharabayko-srt §3).
const (
	srtHeaderLen    = 16
	hsCIFLen        = 48
	ctrlHandshake   = 0x0000
	ctrlUserDefined = 0x7FFF // carries the KM refresh: subtype KMREQ (3) or KMRSP (4)
	hsConclusion    = 0xFFFFFFFF
	extKMREQ        = 3
	extKMRSP        = 4
)

// srtData is a data packet of a capture.
type srtData struct {
	seq     uint32
	kk      wire.KeyIndex
	rexmit  bool
	payload []byte
}

// srtEvent is one packet of a capture in order: a data packet, or a KM (from a conclusion
// handshake's extension or a KM refresh control packet).
type srtEvent struct {
	from    uint16 // UDP source port
	data    *srtData
	km      []byte // KM message or KM state word
	kmCmd   int    // extKMREQ or extKMRSP when km is set
	refresh bool   // the KM came in a user-defined control packet, not a handshake
}

// srtEvents decodes the SRT packets of a capture. Malformed ones fail the test: the captures
// are libsrt's.
func srtEvents(t testing.TB, dgs []datagram) []srtEvent {
	t.Helper()
	var evs []srtEvent
	for i, d := range dgs {
		p := d.payload
		if len(p) < srtHeaderLen {
			t.Fatalf("datagram %d: %d bytes, shorter than an SRT header", i, len(p))
		}
		w0, w1 := binary.BigEndian.Uint32(p[0:4]), binary.BigEndian.Uint32(p[4:8])
		if w0>>31 == 0 {
			// Data: the second word is PP(2) O(1) KK(2) R(1) message number(26).
			evs = append(evs, srtEvent{from: d.src, data: &srtData{
				seq: w0 & 0x7FFFFFFF, kk: wire.KeyIndex(w1 >> 27 & 3), rexmit: w1>>26&1 == 1, payload: p[srtHeaderLen:],
			}})
			continue
		}
		typ, sub := w0>>16&0x7FFF, w0&0xFFFF
		switch typ {
		case ctrlUserDefined:
			if sub == extKMREQ || sub == extKMRSP {
				evs = append(evs, srtEvent{from: d.src, km: p[srtHeaderLen:], kmCmd: int(sub), refresh: true})
			}
		case ctrlHandshake:
			cif := p[srtHeaderLen:]
			if len(cif) < hsCIFLen {
				t.Fatalf("datagram %d: handshake CIF of %d bytes", i, len(cif))
			}
			if binary.BigEndian.Uint32(cif[20:24]) != hsConclusion || binary.BigEndian.Uint32(cif[0:4]) != 5 {
				continue
			}
			for ext := cif[hsCIFLen:]; len(ext) > 0; {
				if len(ext) < 4 {
					t.Fatalf("datagram %d: %d bytes of extension header", i, len(ext))
				}
				et, n := binary.BigEndian.Uint16(ext[0:2]), int(binary.BigEndian.Uint16(ext[2:4]))*4
				if n > len(ext)-4 {
					t.Fatalf("datagram %d: extension %d of %d bytes, %d left", i, et, n, len(ext)-4)
				}
				if et == extKMREQ || et == extKMRSP {
					evs = append(evs, srtEvent{from: d.src, km: ext[4 : 4+n], kmCmd: int(et)})
				}
				ext = ext[4+n:]
			}
		}
	}
	return evs
}

func loadCapture(t testing.TB, name string) []srtEvent {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	dgs, err := readPcap(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return srtEvents(t, dgs)
}

// handshakeKM returns the KM the caller sent in its conclusion handshake (KMREQ) and the port it
// sent from.
func handshakeKM(t testing.TB, evs []srtEvent) ([]byte, uint16) {
	t.Helper()
	for _, e := range evs {
		if e.km != nil && !e.refresh && e.kmCmd == extKMREQ {
			return e.km, e.from
		}
	}
	t.Fatal("no KMREQ in a conclusion handshake")
	return nil, 0
}

func TestReadPcapRefusesTruncated(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "badsecret.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 10, 24 + 8, len(b) - 1} {
		if _, err := readPcap(b[:n]); err == nil {
			t.Errorf("readPcap of the first %d bytes: no error", n)
		}
	}
	if _, err := readPcap(b); err != nil {
		t.Fatal(err)
	}
}
