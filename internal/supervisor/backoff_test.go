package supervisor

import (
	"slices"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	o := Options{}.withDefaults()
	b := newBackoff(o.Initial, o.Max)
	var got []time.Duration
	for range 7 {
		got = append(got, b.next())
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second,
		8 * time.Second, 10 * time.Second, 10 * time.Second}
	if !slices.Equal(got, want) {
		t.Fatalf("delays %v, want %v", got, want)
	}
	b.reset()
	if d := b.next(); d != 500*time.Millisecond {
		t.Fatalf("after reset %v, want 500ms", d)
	}
}

func TestOptionsDefaults(t *testing.T) {
	o := Options{Initial: time.Minute, Max: time.Second}.withDefaults()
	if o.Initial != time.Second || o.StableAfter != DefaultStableAfter || o.Logger == nil {
		t.Fatalf("defaults %+v", o)
	}
}
