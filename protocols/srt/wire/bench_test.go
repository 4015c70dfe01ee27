package wire

import "testing"

func BenchmarkParseData(b *testing.B) {
	pkt := AppendData(nil, &Data{Seq: 1, Position: PosSolo, MsgNo: 1, Payload: make([]byte, 1316)})
	var d Data
	b.ReportAllocs()
	b.SetBytes(int64(len(pkt)))
	for b.Loop() {
		if err := ParseData(pkt, &d); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendData(b *testing.B) {
	d := Data{Seq: 1, Position: PosSolo, MsgNo: 1, Payload: make([]byte, 1316)}
	buf := make([]byte, 0, MaxDatagram)
	b.ReportAllocs()
	b.SetBytes(int64(HeaderSize + len(d.Payload)))
	for b.Loop() {
		buf = AppendData(buf[:0], &d)
	}
}

func BenchmarkAppendACK(b *testing.B) {
	buf := make([]byte, 0, 64)
	a := ACK{Kind: ACKFull, LastACKSeq: 5}
	c := Control{Type: CtrlACK, Info: 1}
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendACK(AppendControlHeader(buf[:0], &c), &a)
	}
}
