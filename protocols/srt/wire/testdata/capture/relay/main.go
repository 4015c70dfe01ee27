// Command relay forwards UDP datagrams between one client and a target, dropping a share of
// them at random in both directions, to make libsrt send loss reports and retransmissions
// while capture.sh records the session. It is a capture tool, not part of sluice.
package main

import (
	"flag"
	"log"
	"math/rand/v2"
	"net"
	"sync"
)

func main() {
	listen := flag.String("l", "127.0.0.1:40010", "address the client sends to")
	target := flag.String("t", "127.0.0.1:40011", "address datagrams are forwarded to")
	loss := flag.Float64("loss", 0.05, "share of datagrams dropped in each direction")
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
	back, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		log.Fatal(err)
	}
	var mu sync.Mutex
	var client *net.UDPAddr
	go func() {
		b := make([]byte, 2048)
		for {
			n, _, err := back.ReadFromUDP(b)
			if err != nil {
				return
			}
			mu.Lock()
			c := client
			mu.Unlock()
			if c != nil && rand.Float64() >= *loss {
				_, _ = front.WriteToUDP(b[:n], c)
			}
		}
	}()
	b := make([]byte, 2048)
	for {
		n, a, err := front.ReadFromUDP(b)
		if err != nil {
			return
		}
		mu.Lock()
		client = a
		mu.Unlock()
		if rand.Float64() >= *loss {
			_, _ = back.WriteToUDP(b[:n], ta)
		}
	}
}
