package mpegts

const (
	tsMask  = 1<<33 - 1
	tsHalf  = 1 << 32
	tsRange = 1 << 33
)

// unwrapper extends 33-bit MPEG-TS timestamps into a continuous int64 timeline. One
// unwrapper serves every PID of a program, so the tracks stay aligned across a wrap.
type unwrapper struct {
	started bool
	ref     int64
}

// unwrap returns the timestamp nearest to the previous one that equals ts modulo 2^33.
func (u *unwrapper) unwrap(ts int64) int64 {
	ts &= tsMask
	if !u.started {
		u.started, u.ref = true, ts
		return ts
	}
	d := (ts - u.ref) & tsMask
	if d >= tsHalf {
		d -= tsRange
	}
	u.ref += d
	return u.ref
}

// near returns the value equal to ts modulo 2^33 nearest to ref, without moving the
// reference: PTS is placed next to its DTS.
func near(ref, ts int64) int64 {
	d := (ts - ref) & tsMask
	if d >= tsHalf {
		d -= tsRange
	}
	return ref + d
}
