package mpegts

import (
	"bytes"
	"testing"

	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
)

// FuzzDemux feeds arbitrary bytes, pulled from a reader and pushed in chunks: the demuxer
// must neither panic nor return units that break its contract.
func FuzzDemux(f *testing.F) {
	// Small seeds keep the fuzzer's minimisation of new inputs quick.
	for _, tc := range roundTripCases {
		aus := mediatest.Synth(tc.tracks, 0.12, tc.start, 2, tc.reorder)
		for _, au := range aus {
			last := au.Payload[len(au.Payload)-1]
			au.Payload[len(au.Payload)-1] = last[:min(len(last), 40)]
		}
		f.Add(muxAll(f, tc.tracks, aus))
	}
	f.Add([]byte{0x47, 0x40, 0x00, 0x10, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		d := NewDemuxer(bytes.NewReader(data))
		tracks, err := d.Tracks()
		if err == nil {
			for range 100000 {
				au, err := d.Read()
				if err != nil {
					break
				}
				if au.Track < 0 || au.Track >= len(tracks) || len(au.Payload) == 0 {
					t.Fatalf("unit of track %d with %d parts, %d tracks", au.Track, len(au.Payload), len(tracks))
				}
			}
		}
		p := NewDemuxer(nil)
		for i := 0; i < len(data); i += 97 {
			_, _ = p.Write(data[i:min(i+97, len(data))])
			for {
				if _, err := p.Read(); err != nil {
					break
				}
			}
		}
		p.Flush()
	})
}
