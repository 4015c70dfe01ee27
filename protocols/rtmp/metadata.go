package rtmp

import (
	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/flv"
)

// FLV codec IDs announced in onMetaData (FLV 10.1 annex E); enhanced RTMP announces H.265 by
// its FourCC as a number.
const (
	metaVideoAVC = 7
	metaAudioMP3 = 2
	metaAudioAAC = 10
)

// appendMetaData appends the AMF0 values of an onMetaData data message describing tracks,
// preceded by "@setDataFrame" when publishing to a server (which keeps it for its players).
func appendMetaData(dst []byte, setDataFrame bool, tracks []media.Track) []byte {
	props := amfECMA{{"duration", 0}, {"encoder", "sluice"}}
	for _, t := range tracks {
		switch t.Codec {
		case media.CodecH264, media.CodecH265:
			id := float64(metaVideoAVC)
			if t.Codec == media.CodecH265 {
				id = float64(flv.FourCCHEVC)
			}
			props = append(props, amfProp{"videocodecid", id})
			if t.Params.Width > 0 && t.Params.Height > 0 {
				props = append(props, amfProp{"width", t.Params.Width}, amfProp{"height", t.Params.Height})
			}
		case media.CodecAAC, media.CodecMP3:
			id := metaAudioAAC
			if t.Codec == media.CodecMP3 {
				id = metaAudioMP3
			}
			props = append(props, amfProp{"audiocodecid", id}, amfProp{"stereo", t.Params.Channels != 1})
			if t.Params.SampleRate > 0 {
				props = append(props, amfProp{"audiosamplerate", t.Params.SampleRate})
			}
			if t.Params.Channels > 0 {
				props = append(props, amfProp{"audiochannels", t.Params.Channels})
			}
		}
	}
	if setDataFrame {
		dst = amfAppend(dst, "@setDataFrame")
	}
	return amfAppend(dst, "onMetaData", props)
}

// parseMetaData finds the onMetaData properties in the values of a data message, with or
// without "@setDataFrame" in front.
func parseMetaData(vals []any) (map[string]any, bool) {
	for i, v := range vals {
		if s, ok := v.(string); ok && s == "onMetaData" {
			m, ok := value[map[string]any](vals, i+1)
			return m, ok
		}
	}
	return nil, false
}

// metaKinds tells which kinds of track a stream's metadata announces; ok is false when it
// says nothing about codecs.
func metaKinds(m map[string]any) (video, audio, ok bool) {
	_, video = m["videocodecid"]
	_, audio = m["audiocodecid"]
	if m["width"] != nil || m["height"] != nil {
		video = true
	}
	return video, audio, video || audio
}
