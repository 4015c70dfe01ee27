package wire

import (
	"bytes"
	"errors"
	"testing"
)

func TestParseDataRoundTrip(t *testing.T) {
	d := Data{Seq: SeqMask, Position: PosSolo, InOrder: true, Key: KeyOdd, Retransmitted: true,
		MsgNo: MsgNoMask, Timestamp: 0xFFFFFFFF, DestSocket: 0x12345678, Payload: []byte("payload")}
	b := AppendData(nil, &d)
	if IsControl(b) {
		t.Fatal("data taken for control")
	}
	var got Data
	if err := ParseData(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Seq != d.Seq || got.Position != d.Position || !got.InOrder || got.Key != d.Key || !got.Retransmitted ||
		got.MsgNo != d.MsgNo || got.Timestamp != d.Timestamp || got.DestSocket != d.DestSocket || !bytes.Equal(got.Payload, d.Payload) {
		t.Errorf("got %+v, want %+v", got, d)
	}
	d.Retransmitted = false
	b = AppendData(b[:0], &d)
	SetRetransmitted(b)
	if err := ParseData(b, &got); err != nil || !got.Retransmitted || got.MsgNo != d.MsgNo || got.Key != d.Key {
		t.Errorf("SetRetransmitted: %+v %v", got, err)
	}
}

func TestParseDataLibsrt(t *testing.T) {
	// The first data packet of an ffmpeg session: PP=11, O=1, KK=00, R=0, message 1.
	b := mustHex(t, "478aac44e0000001000267c529b60f4e4740111000")
	var d Data
	if err := ParseData(b, &d); err != nil {
		t.Fatal(err)
	}
	if d.Seq != 0x478aac44 || d.Position != PosSolo || !d.InOrder || d.Key != KeyNone || d.Retransmitted || d.MsgNo != 1 ||
		d.DestSocket != 0x29b60f4e || len(d.Payload) != 5 || d.Payload[0] != 0x47 {
		t.Errorf("%+v", d)
	}
}

func TestParseErrors(t *testing.T) {
	var d Data
	var c Control
	if err := ParseData(make([]byte, 15), &d); !errors.Is(err, ErrTruncated) {
		t.Errorf("short data: %v", err)
	}
	if err := ParseControl(nil, &c); !errors.Is(err, ErrTruncated) {
		t.Errorf("empty control: %v", err)
	}
	ctrl := AppendControl(nil, &Control{Type: CtrlKeepAlive})
	if err := ParseData(ctrl, &d); !errors.Is(err, ErrInvalid) {
		t.Errorf("control as data: %v", err)
	}
	if err := ParseControl(make([]byte, 16), &c); !errors.Is(err, ErrInvalid) {
		t.Errorf("data as control: %v", err)
	}
	if _, err := DestSocket([]byte{1, 2}); !errors.Is(err, ErrTruncated) {
		t.Errorf("DestSocket: %v", err)
	}
	if IsControl(nil) {
		t.Error("IsControl(nil)")
	}
}

func TestControlRoundTrip(t *testing.T) {
	c := Control{Type: CtrlUser, Subtype: ExtKMReq, Info: 7, Timestamp: 99, DestSocket: 5, CIF: []byte{1, 2, 3, 4}}
	var got Control
	if err := ParseControl(AppendControl(nil, &c), &got); err != nil {
		t.Fatal(err)
	}
	if got.Type != c.Type || got.Subtype != c.Subtype || got.Info != c.Info || got.Timestamp != c.Timestamp ||
		got.DestSocket != c.DestSocket || !bytes.Equal(got.CIF, c.CIF) {
		t.Errorf("got %+v", got)
	}
	if s := ControlType(0x1234).String(); s != "control-0x1234" {
		t.Errorf("String %q", s)
	}
}

func TestACK(t *testing.T) {
	cases := []struct {
		hex  string
		kind ACKKind
	}{
		{"3cfdd0ef", ACKLight},
		{"478aac4d000186a00000c35000001ffe", ACKSmall},
		{"478aac4d000186a00000c35000001ffe00000002000003e800000623", ACKFull},
	}
	for _, c := range cases {
		cif := mustHex(t, c.hex)
		var a ACK
		if err := ParseACK(cif, &a); err != nil {
			t.Fatal(err)
		}
		if a.Kind != c.kind {
			t.Errorf("%s: kind %d", c.hex, a.Kind)
		}
		if got := AppendACK(nil, &a); !bytes.Equal(got, cif) {
			t.Errorf("round trip %x, want %x", got, cif)
		}
	}
	var a ACK
	if err := ParseACK(mustHex(t, "478aac4d000186a00000c35000001ffe00000002000003e800000623"), &a); err != nil ||
		a.RTT != 100000 || a.RTTVar != 50000 || a.AvailBuf != 8190 || a.PktRecvRate != 2 || a.LinkCapacity != 1000 || a.RecvRate != 0x623 {
		t.Errorf("full ACK %+v %v", a, err)
	}
	if err := ParseACK([]byte{1, 2, 3}, &a); !errors.Is(err, ErrTruncated) {
		t.Errorf("short ACK: %v", err)
	}
	if err := ParseACK([]byte{0x80, 0, 0, 1}, &a); !errors.Is(err, ErrInvalid) {
		t.Errorf("ACK with top bit: %v", err)
	}
}

func TestNAK(t *testing.T) {
	// A libsrt loss report: one range and a single packet.
	cif := mustHex(t, "0a060597bcfdfcb93cfdfceb3cfdfd00")
	r := NewNAKReader(cif)
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	var got [][2]uint32
	for {
		f, l, ok := r.Next()
		if !ok {
			break
		}
		got = append(got, [2]uint32{f, l})
	}
	want := [][2]uint32{{0x0a060597, 0x0a060597}, {0x3cfdfcb9, 0x3cfdfceb}, {0x3cfdfd00, 0x3cfdfd00}}
	if len(got) != len(want) {
		t.Fatalf("ranges %x", got)
	}
	var back []byte
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("range %d: %x, want %x", i, got[i], want[i])
		}
		back = AppendNAKRange(back, got[i][0], got[i][1])
	}
	if !bytes.Equal(back, cif) {
		t.Errorf("round trip %x", back)
	}
	for name, bad := range map[string]string{
		"empty": "", "odd length": "000001", "open range": "80000001", "range end with top bit": "8000000180000002",
		"backwards range": "8000000500000001",
	} {
		if r := NewNAKReader(mustHex(t, bad)); r.Err() == nil {
			t.Errorf("%s: accepted", name)
		} else if _, _, ok := r.Next(); ok {
			t.Errorf("%s: Next after error", name)
		}
	}
	if NAKRangeLen(3, 3) != 4 || NAKRangeLen(3, 4) != 8 {
		t.Error("NAKRangeLen")
	}
}

func TestDropReq(t *testing.T) {
	d := DropReq{First: SeqMask - 1, Last: 3}
	var got DropReq
	if err := ParseDropReq(AppendDropReq(nil, &d), &got); err != nil || got != d {
		t.Errorf("round trip %+v %v", got, err)
	}
	if err := ParseDropReq(make([]byte, 7), &got); !errors.Is(err, ErrTruncated) {
		t.Errorf("short: %v", err)
	}
	if err := ParseDropReq(AppendDropReq(nil, &DropReq{First: 9, Last: 2}), &got); !errors.Is(err, ErrInvalid) {
		t.Errorf("backwards: %v", err)
	}
}
