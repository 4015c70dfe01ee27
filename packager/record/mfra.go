package record

import (
	"fmt"
	"sort"

	"github.com/Eyevinn/mp4ff/bits"
	"github.com/Eyevinn/mp4ff/mp4"
)

// fragIndex collects the random-access points of a fragmented file: for each track, the
// fragments whose first sample is a sync sample (every fragment for audio).
type fragIndex struct {
	tracks map[uint32][]fragEntry
}

type fragEntry struct {
	time, moof uint64
	traf       uint32
}

func (x *fragIndex) add(track uint32, time, moof uint64, traf uint32) {
	if x.tracks == nil {
		x.tracks = map[uint32][]fragEntry{}
	}
	x.tracks[track] = append(x.tracks[track], fragEntry{time: time, moof: moof, traf: traf})
}

// encode returns the mfra box (a tfra per track, then the mfro giving the mfra's size).
func (x *fragIndex) encode() ([]byte, error) {
	mfra := &mp4.MfraBox{}
	ids := make([]uint32, 0, len(x.tracks))
	for id := range x.tracks {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		tfra := &mp4.TfraBox{Version: 1, TrackID: id}
		for _, e := range x.tracks[id] {
			tfra.Entries = append(tfra.Entries, mp4.TfraEntry{Time: e.time, MoofOffset: e.moof,
				TrafNumber: e.traf, TrunNumber: 1, SampleNumber: 1})
		}
		if err := mfra.AddChild(tfra); err != nil {
			return nil, fmt.Errorf("record: index: %w", err)
		}
	}
	mfro := &mp4.MfroBox{}
	if err := mfra.AddChild(mfro); err != nil {
		return nil, fmt.Errorf("record: index: %w", err)
	}
	mfro.ParentSize = uint32(mfra.Size())
	sw := bits.NewFixedSliceWriter(int(mfra.Size()))
	if err := mfra.EncodeSW(sw); err != nil {
		return nil, fmt.Errorf("record: encode index: %w", err)
	}
	return sw.Bytes(), nil
}
