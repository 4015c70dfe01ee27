package link

import (
	"errors"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// lossyRelay forwards UDP datagrams between one client and a server address, dropping a share
// of them at random in both directions and holding some back to send after the next one
// (reordering). It starts losing one second after it starts: a libsrt peer begins with a
// 150 ms periodic NAK interval (its initial RTT estimate) until it has measured the RTT,
// and the loss tests are about the steady state.
type lossyRelay struct {
	front, back *net.UDPConn
	server      *net.UDPAddr
	loss        float64
	reorder     float64
	mu          sync.Mutex
	client      *net.UDPAddr
	wg          sync.WaitGroup
	dropped     atomic.Int64
	reordered   atomic.Int64
	passed      atomic.Int64
	lossFrom    time.Time
}

// newLossyRelay starts a relay to server; it stops when the test ends.
func newLossyRelay(t testing.TB, server string, loss, reorder float64) *lossyRelay {
	t.Helper()
	sa, err := net.ResolveUDPAddr("udp", server)
	if err != nil {
		t.Fatal(err)
	}
	r := &lossyRelay{server: sa, loss: loss, reorder: reorder, lossFrom: time.Now().Add(relayWarmUp)}
	if r.front, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}); err != nil {
		t.Fatal(err)
	}
	if r.back, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}); err != nil {
		t.Fatal(err)
	}
	_ = r.front.SetReadBuffer(4 << 20)
	_ = r.back.SetReadBuffer(4 << 20)
	r.wg.Add(2)
	go r.pump(r.front, r.back, func() *net.UDPAddr { return r.server }, true, 1)
	go r.pump(r.back, r.front, func() *net.UDPAddr {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.client
	}, false, 2)
	t.Cleanup(r.close)
	return r
}

// relayWarmUp is how long the relay forwards everything before it starts losing.
const relayWarmUp = time.Second

// Addr is where the client sends.
func (r *lossyRelay) Addr() string { return r.front.LocalAddr().String() }

func (r *lossyRelay) close() {
	_ = r.front.Close()
	_ = r.back.Close()
	r.wg.Wait()
}

func (r *lossyRelay) pump(in, out *net.UDPConn, to func() *net.UDPAddr, fromClient bool, seed uint64) {
	defer r.wg.Done()
	rng := rand.New(rand.NewPCG(seed, 42))
	buf := make([]byte, 2048)
	var held []byte
	for {
		if held != nil {
			_ = in.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		} else {
			_ = in.SetReadDeadline(time.Time{})
		}
		n, from, err := in.ReadFromUDP(buf)
		if err != nil {
			if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
				if dst := to(); dst != nil && held != nil {
					_, _ = out.WriteToUDP(held, dst)
				}
				held = nil
				continue
			}
			return
		}
		if fromClient {
			r.mu.Lock()
			r.client = from
			r.mu.Unlock()
		}
		dst := to()
		if dst == nil {
			continue
		}
		x := rng.Float64()
		if time.Now().Before(r.lossFrom) {
			x = 1
		}
		switch {
		case x < r.loss:
			r.dropped.Add(1)
		case x < r.loss+r.reorder && held == nil:
			held = append([]byte(nil), buf[:n]...)
			r.reordered.Add(1)
		default:
			r.passed.Add(1)
			_, _ = out.WriteToUDP(buf[:n], dst)
			if held != nil {
				_, _ = out.WriteToUDP(held, dst)
				held = nil
			}
		}
	}
}
