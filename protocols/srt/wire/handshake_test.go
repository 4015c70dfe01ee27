package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// Packets captured from libsrt 1.5.1 on loopback (testdata/capture/README.md).
const (
	// ffmpeg's conclusion with HSREQ (latency 200/200) and stream id publish/live/cam1.
	libsrtConclusionSID = "8000000000000000000002c3000000000000000500000005478aac44000005dc00002000ffffffff2b858d2524beddaa" +
		"0100007f0000000000000000000000000001000300010501000000bf00c800c8000500056c6275702f6873696576696c6d61632f00000031"
	// srt-live-transmit's answer: HSRSP only.
	libsrtConclusionRsp = "8000000000000000000002652b858d250000000500000001478aac44000005dc00002000ffffffff29b60f4e24beddaa" +
		"0100007f0000000000000000000000000002000300010501000000bf00c800c8"
	// ffmpeg's encrypted conclusion (pbkeylen 16): HSREQ (receive 120 ms, peer 0) and KMREQ.
	libsrtConclusionKM = "80000000000000000000038e000000000000000500020003450fb97f000005dc00002000ffffffff2131110cb64f729a" +
		"0100007f0000000000000000000000000001000300010501000000bf007800000003000e12202901000000000200020000000404774cff3b5cfa" +
		"1d3d8694a4515e124bca0f6e063098bcf4e9fbfc8976dd1f581d5a498cda12c35512"
	// srt-live-transmit refusing a caller with another passphrase: handshake type 1000+10.
	libsrtRejectBadSecret = "80000000000000000009055b00a7718200000005000000031976789f000005dc00002000000003f2251173f9aa84f7f4" +
		"0100007f000000000000000000000000"
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func parseHS(t *testing.T, s string) (Control, Handshake) {
	t.Helper()
	var c Control
	if err := ParseControl(mustHex(t, s), &c); err != nil {
		t.Fatal(err)
	}
	if c.Type != CtrlHandshake {
		t.Fatalf("type %v", c.Type)
	}
	var h Handshake
	if err := ParseHandshake(c.CIF, &h); err != nil {
		t.Fatal(err)
	}
	return c, h
}

func TestParseHandshakeLibsrtConclusion(t *testing.T) {
	c, h := parseHS(t, libsrtConclusionSID)
	if c.DestSocket != 0 || h.Version != 5 || h.Type != HSConclusion || h.Extension != HSExtHSReq|HSExtConfig {
		t.Fatalf("header %+v cif %+v", c, h)
	}
	if h.MTU != 1500 || h.FlowWindow != 8192 || h.InitialSeq != 0x478aac44 || h.Cookie != 0x24beddaa {
		t.Errorf("fields %+v", h)
	}
	if h.HSCmd != ExtHSReq || h.HS.Version != 0x010501 || h.HS.Flags != 0xbf || h.HS.RecvDelay != 200 || h.HS.SendDelay != 200 {
		t.Errorf("HSREQ %+v", h.HS)
	}
	if got := h.StreamID(); got != "publish/live/cam1" {
		t.Errorf("stream id %q", got)
	}
	if got := h.PeerAddr(); got != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("peer address %v", got)
	}
	// Written back, the CIF is the same bytes.
	if got := AppendHandshake(nil, &h); !bytes.Equal(got, c.CIF) {
		t.Errorf("round trip:\n got %x\nwant %x", got, c.CIF)
	}
}

func TestParseHandshakeLibsrtResponseAndKM(t *testing.T) {
	c, h := parseHS(t, libsrtConclusionRsp)
	if h.HSCmd != ExtHSRsp || h.HasStreamID || h.KMCmd != 0 || h.SocketID != 0x29b60f4e || c.DestSocket != 0x2b858d25 {
		t.Errorf("response %+v", h)
	}
	c, h = parseHS(t, libsrtConclusionKM)
	if h.Encryption != 2 || h.KMCmd != ExtKMReq || len(h.KM) != 56 || h.HS.RecvDelay != 120 || h.HS.SendDelay != 0 {
		t.Errorf("KM conclusion %+v", h)
	}
	if h.KM[1] != 0x20 || h.KM[2] != 0x29 {
		t.Errorf("KM signature %x", h.KM[:4])
	}
	if got := AppendHandshake(nil, &h); !bytes.Equal(got, c.CIF) {
		t.Errorf("round trip:\n got %x\nwant %x", got, c.CIF)
	}
}

func TestParseHandshakeRejection(t *testing.T) {
	_, h := parseHS(t, libsrtRejectBadSecret)
	if !h.Type.IsRejection() || h.Type.RejectReason() != 10 || Rejection(10) != h.Type {
		t.Errorf("type %v", h.Type)
	}
	for _, typ := range []HandshakeType{HSInduction, HSConclusion, HSAgreement, HSDone, HSWaveAHand} {
		if typ.IsRejection() {
			t.Errorf("%v taken for a rejection", typ)
		}
	}
}

// TestParseHandshakeCrashDatagram is the 65-byte datagram that crashed gosrt v0.10.0 (issue
// 12): an HSv5 conclusion whose extension area is one byte, shorter than a block header.
func TestParseHandshakeCrashDatagram(t *testing.T) {
	b := crashDatagram()
	if len(b) != 65 {
		t.Fatalf("datagram of %d bytes", len(b))
	}
	var c Control
	if err := ParseControl(b, &c); err != nil {
		t.Fatal(err)
	}
	var h Handshake
	if err := ParseHandshake(c.CIF, &h); !errors.Is(err, ErrTruncated) {
		t.Fatalf("err = %v, want ErrTruncated", err)
	}
}

// crashDatagram builds the 65-byte conclusion of TestParseHandshakeCrashDatagram.
func crashDatagram() []byte {
	h := Handshake{Version: 5, Extension: HSExtHSReq, Type: HSConclusion, MTU: 1500, FlowWindow: 8192, SocketID: 7}
	b := AppendControl(nil, &Control{Type: CtrlHandshake})
	b = AppendHandshake(b, &h)
	return append(b, 0x00)
}

func TestParseHandshakeExtensionErrors(t *testing.T) {
	base := Handshake{Version: 5, Type: HSConclusion}
	cif := AppendHandshake(nil, &base)
	ext := func(typ uint16, words int, body []byte) []byte {
		b := append([]byte(nil), cif...)
		b = appendExtHeader(b, typ, words*4)
		return append(b, body...)
	}
	cases := []struct {
		name string
		cif  []byte
		want error
	}{
		{"short cif", cif[:47], ErrTruncated},
		{"two-byte extension area", append(append([]byte(nil), cif...), 0, 1), ErrTruncated},
		{"block longer than datagram", ext(ExtHSReq, 3, make([]byte, 8)), ErrTruncated},
		{"hsreq of two words", ext(ExtHSReq, 2, make([]byte, 8)), ErrTruncated},
		{"empty km", ext(ExtKMReq, 0, nil), ErrTruncated},
		{"oversized km", ext(ExtKMReq, MaxKM/4+1, make([]byte, MaxKM+4)), ErrTooLarge},
		{"oversized stream id", ext(ExtSID, MaxStreamID/4+1, bytes.Repeat([]byte("abcd"), MaxStreamID/4+1)), ErrTooLarge},
		{"oversized congestion", ext(ExtCongestion, MaxCongestion/4+1, make([]byte, MaxCongestion+4)), ErrTooLarge},
		{"oversized filter", ext(ExtFilter, maxConfigExt/4+1, make([]byte, maxConfigExt+4)), ErrTooLarge},
		{"max length block header", ext(ExtSID, 0xFFFF, nil), ErrTruncated},
	}
	for _, c := range cases {
		var h Handshake
		if err := ParseHandshake(c.cif, &h); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
	twice := ext(ExtHSReq, 3, make([]byte, 12))
	twice = appendExtHeader(twice, ExtHSRsp, 12)
	twice = append(twice, make([]byte, 12)...)
	var h Handshake
	if err := ParseHandshake(twice, &h); !errors.Is(err, ErrInvalid) {
		t.Errorf("HSREQ twice: err = %v", err)
	}
	// Filter and group are recognised (to be refused by the link), unknown types skipped.
	ok := ext(ExtFilter, 2, []byte("fec,cols"))
	ok = appendExtHeader(ok, ExtGroup, 8)
	ok = append(ok, make([]byte, 8)...)
	ok = appendExtHeader(ok, 99, 4)
	ok = append(ok, 1, 2, 3, 4)
	if err := ParseHandshake(ok, &h); err != nil || !h.HasFilter || !h.HasGroup {
		t.Errorf("filter/group: err = %v, %+v", err, h)
	}
}

func TestHandshakeStringExtensions(t *testing.T) {
	for _, sid := range []string{"a", "abcd", "abcde", "#!::r=live/cam1,m=publish", strings.Repeat("x", MaxStreamID)} {
		h := Handshake{Version: 5, Type: HSConclusion, HSCmd: ExtHSReq}
		if err := h.SetStreamID(sid); err != nil {
			t.Fatal(err)
		}
		if err := h.SetCongestion("live"); err != nil {
			t.Fatal(err)
		}
		var back Handshake
		if err := ParseHandshake(AppendHandshake(nil, &h), &back); err != nil {
			t.Fatal(err)
		}
		if back.StreamID() != sid || back.Congestion() != "live" {
			t.Errorf("stream id %q congestion %q, want %q", back.StreamID(), back.Congestion(), sid)
		}
	}
	var h Handshake
	if err := h.SetStreamID(strings.Repeat("x", MaxStreamID+1)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("long stream id: %v", err)
	}
}

func TestPeerAddr(t *testing.T) {
	for _, s := range []string{"127.0.0.1", "192.168.1.20", "::1", "2001:db8::5"} {
		var h Handshake
		a := netip.MustParseAddr(s)
		h.PutPeerAddr(a)
		if got := h.PeerAddr(); got != a {
			t.Errorf("%s: got %v", s, got)
		}
	}
}
