package avi

import (
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// FuzzRepair feeds arbitrary bytes to Repair: it must return, without a panic, an error or a
// file that it can repair again to the same duration.
func FuzzRepair(f *testing.F) {
	// Small seeds: the header and a second of units with payloads cut to a few bytes.
	units := synthUnits(rand.New(rand.NewPCG(5, 6)), 1, 10, 12)
	for _, au := range units {
		au.Payload = [][]byte{au.Payload[0][:9]}
	}
	data := writeSynth(f, units, Options{}, true)
	f.Add(data)
	f.Add(writeSynth(f, units, Options{}, false))
	f.Add(data[:len(data)-100])
	f.Add([]byte("RIFF\x00\x00\x00\x00AVI LIST\x04\x00\x00\x00hdrl"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		file := writeRW(t, filepath.Join(dir, "fuzz.avi"), b)
		d1, err := Repair(file)
		if err != nil {
			return
		}
		d2, err := Repair(file)
		if err != nil || d1 != d2 {
			t.Fatalf("second Repair: %v, %v after %v", err, d2, d1)
		}
	})
}
