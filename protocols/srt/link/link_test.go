package link

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"
)

func TestLoopbackOurs(t *testing.T) {
	ln, err := Listen("127.0.0.1:0", Config{Latency: 200 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	type res struct {
		got [][]byte
		err error
	}
	done := make(chan res, 1)
	go func() {
		c, _, err := ln.Accept(ctx)
		if err != nil {
			done <- res{err: err}
			return
		}
		var got [][]byte
		buf := make([]byte, 2000)
		for {
			n, err := c.Read(buf)
			if err != nil {
				done <- res{got: got, err: err}
				return
			}
			got = append(got, append([]byte(nil), buf[:n]...))
		}
	}()
	c, err := Dial(ctx, ln.Addr().String(), Config{Latency: 200 * time.Millisecond, StreamID: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var sent [][]byte
	for i := range 500 {
		p := bytes.Repeat([]byte(fmt.Sprintf("%06d", i)), 220)[:1316]
		sent = append(sent, p)
		if _, err := c.Write(p); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	t.Logf("sender stats %+v", c.Stats())
	c.Close()
	r := <-done
	t.Logf("got %d err %v", len(r.got), r.err)
	if len(r.got) != len(sent) {
		t.Fatalf("got %d of %d", len(r.got), len(sent))
	}
	for i := range sent {
		if !bytes.Equal(sent[i], r.got[i]) {
			t.Fatalf("message %d differs", i)
		}
	}
}
