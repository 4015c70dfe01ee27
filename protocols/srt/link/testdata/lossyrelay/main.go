// Command lossyrelay forwards UDP datagrams between one client and a server, dropping a share
// of them at random in both directions and holding some back to send after the next one
// (reordering). The link package's loss tests run it as a separate process, and the wire
// package's capture script puts it between libsrt peers. It is a test tool, not part of
// sluice.
//
// It prints "ready <address>" once listening, and on SIGINT or SIGTERM the counts
// "dropped <n> reordered <n> passed <n>" before it exits.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"net"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	listen := flag.String("l", "127.0.0.1:0", "address the client sends to")
	target := flag.String("t", "", "server address datagrams are forwarded to")
	loss := flag.Float64("loss", 0.05, "share of datagrams dropped in each direction")
	reorder := flag.Float64("reorder", 0, "share of datagrams held back until the next one")
	warmUp := flag.Duration("warmup", 0, "how long to drop nothing (reordering as after) before losing")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	la, err := net.ResolveUDPAddr("udp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	ta, err := net.ResolveUDPAddr("udp", *target)
	if err != nil {
		log.Fatal(err)
	}
	front, err := net.ListenUDP("udp", la)
	if err != nil {
		log.Fatal(err)
	}
	back, err := net.ListenUDP("udp", &net.UDPAddr{IP: ta.IP.To16()[:16], Port: 0})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range []*net.UDPConn{front, back} {
		_ = c.SetReadBuffer(4 << 20)
		_ = c.SetWriteBuffer(4 << 20)
	}
	r := &relay{loss: *loss, reorder: *reorder, lossFrom: time.Now().Add(*warmUp)}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); r.pump(front, back, func() *net.UDPAddr { return ta }, true, *seed) }()
	go func() { defer wg.Done(); r.pump(back, front, r.clientAddr, false, *seed+1) }()
	fmt.Printf("ready %s\n", front.LocalAddr())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	_ = front.Close()
	_ = back.Close()
	wg.Wait()
	fmt.Printf("dropped %d reordered %d passed %d\n", r.dropped.Load(), r.reordered.Load(), r.passed.Load())
}

type relay struct {
	loss, reorder float64
	lossFrom      time.Time
	mu            sync.Mutex
	client        *net.UDPAddr
	dropped       atomic.Int64
	reordered     atomic.Int64
	passed        atomic.Int64
}

func (r *relay) clientAddr() *net.UDPAddr {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.client
}

// pump forwards what in receives to to(); a held datagram goes after the next one, or after
// 20 ms without one.
func (r *relay) pump(in, out *net.UDPConn, to func() *net.UDPAddr, fromClient bool, seed uint64) {
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
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
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
			x += r.loss // warming up: nothing dropped, the same share reordered
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
