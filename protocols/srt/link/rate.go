package link

import "slices"

// headerOverhead is what libsrt adds to each payload when it paces or estimates rates: the
// SRT header and UDP/IPv4 headers, 44 bytes.
const headerOverhead = 16 + 28

// Input rate estimation (libsrt's CRateEstimator): the first estimate comes after 500 ms (or
// 2000 packets), the next ones every second.
const (
	inRateFastStart = 500_000   // µs
	inRateRunning   = 1_000_000 // µs
	inRateMaxPkts   = 2000
)

// inputRate estimates the rate at which the application writes, bytes per second of payload
// and headers; 0 until the first estimate.
type inputRate struct {
	start  int64
	period int64
	pkts   int64
	bytes  int64
	bps    int64
	init   bool
}

func (r *inputRate) add(now int64, payload int) {
	if !r.init {
		r.init, r.start, r.period = true, now, inRateFastStart
		return
	}
	r.pkts++
	r.bytes += int64(payload)
	elapsed := now - r.start
	early := r.period < inRateRunning && r.pkts > inRateMaxPkts
	if elapsed <= 0 || (!early && elapsed <= r.period) {
		return
	}
	r.bps = (r.bytes + r.pkts*headerOverhead) * 1_000_000 / elapsed
	r.pkts, r.bytes, r.start, r.period = 0, 0, now, inRateRunning
}

// rateWindow counts packets and bytes over one-second windows.
type rateWindow struct {
	start    int64
	pkts     int64
	bytes    int64
	pktRate  int64 // packets per second over the last window
	byteRate int64 // bytes per second over the last window
}

func (w *rateWindow) add(bytes int) {
	w.pkts++
	w.bytes += int64(bytes)
}

// roll closes the window when a second has passed.
func (w *rateWindow) roll(now int64) {
	elapsed := now - w.start
	if elapsed < 1_000_000 {
		return
	}
	w.pktRate = w.pkts * 1_000_000 / elapsed
	w.byteRate = w.bytes * 1_000_000 / elapsed
	w.pkts, w.bytes, w.start = 0, 0, now
}

// probeSamples is how many packet-pair intervals the capacity estimate keeps.
const probeSamples = 16

// capacityProbe estimates the link capacity from packet pairs: the sender sends the packet
// after each one whose sequence number is a multiple of 16 without pacing, so their arrival
// interval measures the bottleneck (libsrt's probe1/probe2).
type capacityProbe struct {
	at      int64 // arrival of the first packet of a pair, or 0
	seq     uint32
	samples [probeSamples]int64
	n, i    int
	sorted  [probeSamples]int64
	cached  int64 // pktsPerSec of the samples as they are; 0 when a sample came since
}

func (p *capacityProbe) arrival(seq uint32, now int64, rexmit bool) {
	if rexmit {
		p.at = 0
		return
	}
	switch seq & 0xF {
	case 0:
		p.at, p.seq = now, seq
	case 1:
		if p.at != 0 && seq == p.seq+1 {
			d := max(now-p.at, 1)
			p.samples[p.i] = d
			p.i = (p.i + 1) % probeSamples
			p.n = min(p.n+1, probeSamples)
			p.cached = 0
		}
		p.at = 0
	default:
		p.at = 0
	}
}

// pktsPerSec returns the capacity, packets per second, from the median interval.
func (p *capacityProbe) pktsPerSec() int64 {
	if p.n == 0 || p.cached != 0 {
		return p.cached
	}
	s := p.sorted[:p.n]
	copy(s, p.samples[:p.n])
	slices.Sort(s)
	p.cached = 1_000_000 / s[len(s)/2]
	return p.cached
}

// Drift tracking (libsrt's DriftTracer): the average of 1000 samples; beyond 5 ms the excess
// moves the time base.
const (
	driftSamples = 1000
	driftMax     = 5000 // µs
)

type driftTracer struct {
	sum   int64
	n     int
	drift int64 // µs added to every delivery time
}

// update adds a sample and returns how far to move the time base (0 mostly).
func (d *driftTracer) update(sample int64) (overdrift int64) {
	d.sum += sample
	d.n++
	if d.n < driftSamples {
		return 0
	}
	avg := d.sum / int64(d.n)
	d.sum, d.n = 0, 0
	switch {
	case avg > driftMax:
		overdrift = driftMax
	case avg < -driftMax:
		overdrift = -driftMax
	}
	d.drift = avg - overdrift
	return overdrift
}
