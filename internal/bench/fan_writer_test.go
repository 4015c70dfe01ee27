package bench

import (
	"bytes"
	"errors"
	"testing"
)

// failAfter accepts n writes, then fails.
type failAfter struct {
	n   int
	buf bytes.Buffer
}

func (w *failAfter) Write(b []byte) (int, error) {
	if w.n == 0 {
		return 0, errors.New("broken pipe")
	}
	w.n--
	return w.buf.Write(b)
}

// TestFanWriter: every chunk reaches every healthy writer; one that fails is left out and
// named, the others go on; with none left, Write fails.
func TestFanWriter(t *testing.T) {
	var a, c bytes.Buffer
	b := &failAfter{n: 1}
	fw := &fanWriter{}
	fw.add(&a)
	fw.add(b)
	fw.add(&c)
	for _, chunk := range []string{"one", "two", "three"} {
		if n, err := fw.Write([]byte(chunk)); err != nil || n != len(chunk) {
			t.Fatalf("write %q: %d, %v", chunk, n, err)
		}
	}
	if a.String() != "onetwothree" || c.String() != "onetwothree" {
		t.Fatalf("healthy writers got %q and %q", a.String(), c.String())
	}
	if b.buf.String() != "one" {
		t.Fatalf("failing writer got %q after failing", b.buf.String())
	}
	if err := fw.Err(); err == nil || err.Error() != "write to listener 2 of 3: broken pipe" {
		t.Fatalf("Err() = %v", err)
	}

	lone := &fanWriter{}
	lone.add(&failAfter{})
	if _, err := lone.Write([]byte("x")); err == nil {
		t.Fatal("write with every writer failed: no error")
	}
	if _, err := (&fanWriter{}).Write([]byte("x")); err == nil {
		t.Fatal("write with no writer: no error")
	}
}
