package flv

// msClock extends 32-bit millisecond timestamps into a continuous int64 timeline: a step of
// less than 2^31 ms either way is taken as such, so the wrap after 49.7 days is crossed.
type msClock struct {
	started bool
	last    uint32
	ext     int64
}

func (c *msClock) unwrap(ts uint32) int64 {
	if !c.started {
		c.started, c.last, c.ext = true, ts, int64(ts)
		return c.ext
	}
	c.ext += int64(int32(ts - c.last))
	c.last = ts
	return c.ext
}
