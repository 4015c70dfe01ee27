package avi

import "github.com/sluicemedia/sluice/internal/media"

// layout locates the header fields patched once the media is written: body offsets of avih,
// dmlh (-1 when absent) and of each stream's chunks.
type layout struct {
	avih, dmlh int64
	streams    []streamLayout
}

// streamLayout locates one stream's header chunks; indx is -1 when absent.
type streamLayout struct {
	strh, strf, indx int64
	indxCap          int
	video, audio     bool
	handler          fourCC
	id               fourCC
}

// buildHeader returns the file's header, from RIFF to the movi list's header included, with
// the sizes and lengths that only the media gives left at zero, and where they are.
func buildHeader(streams []*stream) ([]byte, layout) {
	var l layout
	var w, h int
	for _, s := range streams {
		if s.video && w == 0 {
			w, h = s.trk.Params.Width, s.trk.Params.Height
		}
	}
	b, riff := beginList(nil, fccRIFF, fccAVI)
	b, hdrl := beginList(b, fccLIST, fccHdrl)

	b = appendChunkHeader(b, fccAvih, avihSize)
	l.avih = int64(len(b))
	b = le32(b, 0) // dwMicroSecPerFrame
	b = le32(b, 0) // dwMaxBytesPerSec
	b = le32(b, 0) // dwPaddingGranularity
	b = le32(b, avihHasIndex|avihIsInterleaved|avihTrustCKType)
	b = le32(b, 0) // dwTotalFrames
	b = le32(b, 0) // dwInitialFrames
	b = le32(b, uint32(len(streams)))
	b = le32(b, 0) // dwSuggestedBufferSize
	b = le32(b, uint32(w))
	b = le32(b, uint32(h))
	b = append(b, make([]byte, 16)...) // dwReserved

	for _, s := range streams {
		var sl streamLayout
		var strl int
		b, strl = beginList(b, fccLIST, fccStrl)
		b, sl.strh = appendStrh(b, s)
		b, sl.strf = appendStrf(b, s)
		b = appendChunkHeader(b, fccIndx, superIndexHeader+superIndexEntries*superIndexEntry)
		sl.indx, sl.indxCap = int64(len(b)), superIndexEntries
		b = appendSuperIndex(b, s.id, nil)
		b = append(b, make([]byte, superIndexEntries*superIndexEntry)...)
		endList(b, strl)
		sl.video, sl.audio, sl.handler, sl.id = s.video, !s.video, s.handler, s.id
		l.streams = append(l.streams, sl)
	}

	b, odml := beginList(b, fccLIST, fccOdml)
	b = appendChunkHeader(b, fccDmlh, dmlhSize)
	l.dmlh = int64(len(b))
	b = append(b, make([]byte, dmlhSize)...)
	endList(b, odml)
	endList(b, hdrl)
	_ = riff // the RIFF and movi sizes stay zero until a segment is finished

	b, _ = beginList(b, fccLIST, fccMovi)
	return b, l
}

// appendStrh appends a stream header and returns where its body starts.
func appendStrh(b []byte, s *stream) ([]byte, int64) {
	b = appendChunkHeader(b, fccStrh, strhSize)
	at := int64(len(b))
	var frame [4]uint16
	if s.video {
		b = append(b, fccVids[:]...)
		b = append(b, s.handler[:]...)
		frame[2], frame[3] = uint16(s.trk.Params.Width), uint16(s.trk.Params.Height)
	} else {
		b = append(b, fccAuds[:]...)
		b = le32(b, 0)
	}
	b = le32(b, 0) // dwFlags
	b = le16(b, 0) // wPriority
	b = le16(b, 0) // wLanguage
	b = le32(b, 0) // dwInitialFrames
	b = le32(b, s.scale)
	b = le32(b, s.rate)
	b = le32(b, 0)          // dwStart
	b = le32(b, 0)          // dwLength
	b = le32(b, 0)          // dwSuggestedBufferSize
	b = le32(b, 0xFFFFFFFF) // dwQuality: default
	b = le32(b, 0)          // dwSampleSize: chunks of varying size, one frame each
	for _, v := range frame {
		b = le16(b, v)
	}
	return b, at
}

// appendStrf appends a stream format: a BITMAPINFOHEADER for video, a WAVEFORMATEX for audio
// (with the AudioSpecificConfig as AAC's extra data). It returns where its body starts.
func appendStrf(b []byte, s *stream) ([]byte, int64) {
	if s.video {
		b = appendChunkHeader(b, fccStrf, 40)
		at := int64(len(b))
		w, h := s.trk.Params.Width, s.trk.Params.Height
		b = le32(b, 40)
		b = le32(b, uint32(w))
		b = le32(b, uint32(h))
		b = le16(b, 1)  // biPlanes
		b = le16(b, 24) // biBitCount
		b = append(b, s.handler[:]...)
		b = le32(b, uint32(w*h*3))
		b = append(b, make([]byte, 16)...) // resolution and palette: none
		return b, at
	}
	tag := uint16(waveFormatMP3)
	var extra []byte
	if s.trk.Codec == media.CodecAAC {
		tag, extra = waveFormatAAC, s.trk.Params.AudioConfig
	}
	channels := max(s.trk.Params.Channels, 1)
	b = appendChunkHeader(b, fccStrf, uint32(18+len(extra)))
	at := int64(len(b))
	b = le16(b, tag)
	b = le16(b, uint16(channels))
	b = le32(b, s.rate)
	b = le32(b, 0) // nAvgBytesPerSec, patched
	// nBlockAlign 0: each chunk is one frame whatever its size (ffmpeg counts a chunk as
	// ceil(size/nBlockAlign) frames otherwise, and an empty one as none).
	// nBlockAlign: the largest frame, as ffmpeg writes it for AAC (768 bytes a channel). VLC
	// cannot time AAC whose nBlockAlign is 0 (issue 19), and with it set readers count a
	// chunk as ceil(size/nBlockAlign) frames: one for every frame, none for an empty chunk.
	b = le16(b, uint16(blockAlign(s.trk)))
	b = le16(b, 0) // wBitsPerSample: compressed
	b = le16(b, uint16(len(extra)))
	b = append(b, extra...)
	if len(extra)&1 == 1 {
		b = append(b, 0)
	}
	return b, at
}

// appendSuperIndex appends the body of an indx super index without room for more entries.
func appendSuperIndex(b []byte, id fourCC, entries []superEntry) []byte {
	b = le16(b, 4) // wLongsPerEntry
	b = append(b, 0, indexOfIndexes)
	b = le32(b, uint32(len(entries)))
	b = append(b, id[:]...)
	b = append(b, make([]byte, 12)...)
	for _, e := range entries {
		b = le64(b, uint64(e.off))
		b = le32(b, e.size)
		b = le32(b, e.dur)
	}
	return b
}
