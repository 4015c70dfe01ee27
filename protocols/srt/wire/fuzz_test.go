package wire

import (
	"bytes"
	"testing"
)

// The fuzz targets take whole datagrams; testdata/fuzz/<Target>/libsrt-* are packets captured
// from libsrt 1.5.1 (testdata/capture/README.md). Each target checks that parsing never
// panics and that what parses writes back to the same values.

func addCrafted(f *testing.F) {
	f.Add(crashDatagram())
	f.Add([]byte{})
	f.Add(make([]byte, HeaderSize))
	hs := Handshake{Version: 5, Type: HSConclusion, HSCmd: ExtHSReq, KMCmd: ExtKMReq, KM: make([]byte, MaxKM)}
	_ = hs.SetStreamID("#!::r=live/cam1,m=publish")
	f.Add(AppendHandshake(AppendControl(nil, &Control{Type: CtrlHandshake}), &hs))
	f.Add(AppendDropReq(AppendControl(nil, &Control{Type: CtrlDropReq, Info: 5}), &DropReq{First: 10, Last: 20}))
	f.Add(AppendControl(nil, &Control{Type: CtrlPeerError, Info: 4000}))
	f.Add(AppendControl(nil, &Control{Type: CtrlCongestion}))
}

func FuzzParsePacket(f *testing.F) {
	addCrafted(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if !IsControl(b) {
			checkData(t, b)
			return
		}
		var c Control
		if err := ParseControl(b, &c); err != nil {
			return
		}
		switch c.Type {
		case CtrlHandshake:
			checkHandshake(t, c.CIF)
		case CtrlACK:
			checkACK(t, c.CIF)
		case CtrlNAK:
			fuzzNAK(t, c.CIF)
		case CtrlDropReq:
			checkDropReq(t, c.CIF)
		}
	})
}

func FuzzParseData(f *testing.F) {
	addCrafted(f)
	f.Fuzz(func(t *testing.T, b []byte) { checkData(t, b) })
}

func FuzzParseControl(f *testing.F) {
	addCrafted(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		c, back, ok := reparse(t, b, ParseControl, AppendControl)
		if !ok {
			return
		}
		if back.Type != c.Type || back.Subtype != c.Subtype || back.Info != c.Info || back.Timestamp != c.Timestamp ||
			back.DestSocket != c.DestSocket || !bytes.Equal(back.CIF, c.CIF) {
			t.Fatalf("round trip %+v != %+v", back, c)
		}
	})
}

func FuzzParseHandshake(f *testing.F) { fuzzCIF(f, checkHandshake) }

func FuzzParseACK(f *testing.F) { fuzzCIF(f, checkACK) }

func FuzzNAKReader(f *testing.F) { fuzzCIF(f, fuzzNAK) }

func FuzzParseDropReq(f *testing.F) { fuzzCIF(f, checkDropReq) }

// fuzzCIF fuzzes check, a check of a control packet's body, from the crafted seeds on.
func fuzzCIF(f *testing.F, check func(t *testing.T, cif []byte)) {
	addCrafted(f)
	f.Fuzz(func(t *testing.T, b []byte) { check(t, cifOf(b)) })
}

// reparse parses b with parse; it reports false when b does not parse (rejecting is fine).
// Otherwise it writes what parsed with appendTo and parses that again, failing the test when
// it does not parse, and returns both values for the caller to compare.
func reparse[T any](t *testing.T, b []byte, parse func([]byte, *T) error, appendTo func([]byte, *T) []byte) (v, back T, ok bool) {
	t.Helper()
	if parse(b, &v) != nil {
		return v, back, false
	}
	if err := parse(appendTo(nil, &v), &back); err != nil {
		t.Fatalf("written %T does not parse: %v", v, err)
	}
	return v, back, true
}

// cifOf returns what follows the header of a datagram (the seeds are whole datagrams).
func cifOf(b []byte) []byte {
	if len(b) < HeaderSize {
		return b
	}
	return b[HeaderSize:]
}

func checkData(t *testing.T, b []byte) {
	d, back, ok := reparse(t, b, ParseData, AppendData)
	if !ok {
		return
	}
	if back.Seq != d.Seq || back.Position != d.Position || back.InOrder != d.InOrder || back.Key != d.Key ||
		back.Retransmitted != d.Retransmitted || back.MsgNo != d.MsgNo || back.Timestamp != d.Timestamp ||
		back.DestSocket != d.DestSocket || !bytes.Equal(back.Payload, d.Payload) {
		t.Fatalf("round trip %+v != %+v", back, d)
	}
}

func checkHandshake(t *testing.T, cif []byte) {
	h, back, ok := reparse(t, cif, ParseHandshake, AppendHandshake)
	if !ok {
		return
	}
	if len(h.KM) > MaxKM || len(h.StreamID()) > MaxStreamID || len(h.Congestion()) > MaxCongestion {
		t.Fatalf("cap exceeded: km %d sid %d", len(h.KM), len(h.StreamID()))
	}
	km := h.KM
	if len(km)%4 != 0 {
		km = append(append([]byte(nil), km...), make([]byte, 4-len(km)%4)...)
	}
	if back.Version != h.Version || back.Encryption != h.Encryption || back.Extension != h.Extension ||
		back.InitialSeq != h.InitialSeq || back.MTU != h.MTU || back.FlowWindow != h.FlowWindow || back.Type != h.Type ||
		back.SocketID != h.SocketID || back.Cookie != h.Cookie || back.PeerIP != h.PeerIP || back.HSCmd != h.HSCmd ||
		back.HS != h.HS || back.KMCmd != h.KMCmd || !bytes.Equal(back.KM, km) {
		t.Fatalf("round trip\n%+v\n%+v", back, h)
	}
	// Trailing NULs of a string extension are padding: compare without them.
	if trimNUL(back.StreamID()) != trimNUL(h.StreamID()) || trimNUL(back.Congestion()) != trimNUL(h.Congestion()) {
		t.Fatalf("strings %q/%q != %q/%q", back.StreamID(), back.Congestion(), h.StreamID(), h.Congestion())
	}
}

func trimNUL(s string) string {
	for len(s) > 0 && s[len(s)-1] == 0 {
		s = s[:len(s)-1]
	}
	return s
}

func checkACK(t *testing.T, cif []byte) {
	if a, back, ok := reparse(t, cif, ParseACK, AppendACK); ok && back != a {
		t.Fatalf("round trip %+v != %+v", back, a)
	}
}

func fuzzNAK(t *testing.T, cif []byte) {
	r := NewNAKReader(cif)
	if r.Err() != nil {
		return
	}
	var back []byte
	n := 0
	for {
		first, last, ok := r.Next()
		if !ok {
			break
		}
		if SeqLess(last, first) {
			t.Fatalf("range %d..%d backwards", first, last)
		}
		back = AppendNAKRange(back, first, last)
		n++
		if n > len(cif)/4 {
			t.Fatal("more entries than words")
		}
	}
	if r2 := NewNAKReader(back); r2.Err() != nil {
		t.Fatalf("written NAK invalid: %v", r2.Err())
	}
}

func checkDropReq(t *testing.T, cif []byte) {
	if d, back, ok := reparse(t, cif, ParseDropReq, AppendDropReq); ok && back != d {
		t.Fatalf("round trip %+v != %+v", back, d)
	}
}
