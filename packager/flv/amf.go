package flv

import (
	"encoding/binary"
	"math"

	"github.com/sluicemedia/sluice/internal/media"
)

// AMF0 type markers.
const (
	amfNumber    = 0x00
	amfBoolean   = 0x01
	amfString    = 0x02
	amfECMAArray = 0x08
)

// appendMetaData writes an onMetaData script tag body: an AMF0 "onMetaData" string and an
// ECMA array describing the tracks. A live recording has no duration, so it is 0.
func appendMetaData(dst []byte, tracks []media.Track) []byte {
	type entry struct {
		key string
		num float64
		b   *bool
	}
	entries := []entry{{key: "duration"}}
	for _, t := range tracks {
		switch t.Codec {
		case media.CodecH264, media.CodecH265:
			id := float64(videoCodecAVC)
			if t.Codec == media.CodecH265 {
				id = float64(FourCCHEVC) // enhanced RTMP announces the FourCC as a number
			}
			entries = append(entries, entry{key: "width", num: float64(t.Params.Width)},
				entry{key: "height", num: float64(t.Params.Height)}, entry{key: "videocodecid", num: id})
		case media.CodecAAC, media.CodecMP3:
			id := float64(soundAAC)
			if t.Codec == media.CodecMP3 {
				id = soundMP3
			}
			stereo := t.Params.Channels != 1
			entries = append(entries, entry{key: "audiocodecid", num: id},
				entry{key: "audiosamplerate", num: float64(t.Params.SampleRate)}, entry{key: "stereo", b: &stereo})
		}
	}
	dst = appendAMFString(dst, "onMetaData")
	dst = append(dst, amfECMAArray)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(entries)))
	for _, e := range entries {
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(e.key)))
		dst = append(dst, e.key...)
		if e.b != nil {
			v := byte(0)
			if *e.b {
				v = 1
			}
			dst = append(dst, amfBoolean, v)
			continue
		}
		dst = append(dst, amfNumber)
		dst = binary.BigEndian.AppendUint64(dst, math.Float64bits(e.num))
	}
	return append(dst, 0, 0, 9) // object end
}

func appendAMFString(dst []byte, s string) []byte {
	dst = append(dst, amfString)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(s)))
	return append(dst, s...)
}
