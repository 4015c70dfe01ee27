package udp

import (
	"testing"
	"time"
)

// TestPacerJumpsDoNotAddUp: forward timestamp jumps under the ahead limit, one per publisher
// session, must not pile up into a growing lag behind the input (the reader would be evicted).
func TestPacerJumpsDoNotAddUp(t *testing.T) {
	var p pacer
	t0 := time.Unix(1000, 0)
	sendAt := t0 // when the sender gets to a unit: after the one before it went out
	var dts90 int64
	worst := time.Duration(0)
	for session := range 50 {
		for i := range 50 { // 2 s at 25 fps
			arrival := t0.Add(time.Duration(session*50+i) * 40 * time.Millisecond)
			now := arrival
			if sendAt.After(now) {
				now = sendAt
			}
			at := p.due(dts90, arrival, now)
			sendAt = at
			if lag := at.Sub(arrival); lag > worst {
				worst = lag
			}
			dts90 += 3600
		}
		dts90 += 135000 // each new session's timestamps jump 1.5 s ahead
	}
	if worst > maxLag {
		t.Errorf("a unit went out %v after it arrived; the lag limit is %v", worst, maxLag)
	}
}

// TestPacerFollowsTimestamps: a steady stream goes out at its own pace.
func TestPacerFollowsTimestamps(t *testing.T) {
	var p pacer
	t0 := time.Unix(1000, 0)
	for i := range 100 {
		arrival := t0.Add(time.Duration(i) * 40 * time.Millisecond)
		at := p.due(int64(i)*3600, arrival, arrival)
		if d := at.Sub(arrival); d < -time.Millisecond || d > time.Millisecond {
			t.Fatalf("unit %d due %v after its arrival", i, d)
		}
	}
}
