package testutil

import (
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// Packet is one packet as ffprobe reports it: its size in bytes and its duration in seconds
// (0 when ffprobe does not know it).
type Packet struct {
	Size     int64
	Duration float64
}

// FFprobePackets lists the packets of every stream of target, in file order, as ffprobe reads
// them (within 60 s); input are ffprobe options that go before the input (such as
// -allowed_extensions ALL).
func FFprobePackets(t testing.TB, target string, input ...string) []Packet {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append([]string{"-v", "error"}, input...)
	args = append(args, "-show_entries", "packet=size,duration_time", "-of", "json", target)
	out, err := exec.CommandContext(ctx, "ffprobe", args...).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", target, err)
	}
	var res struct {
		Packets []struct {
			Size     string `json:"size"`
			Duration string `json:"duration_time"`
		} `json:"packets"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("ffprobe %s: %v", target, err)
	}
	pkts := make([]Packet, 0, len(res.Packets))
	for _, p := range res.Packets {
		n, err := strconv.ParseInt(p.Size, 10, 64)
		if err != nil {
			t.Fatalf("ffprobe %s: packet size %q", target, p.Size)
		}
		d, _ := strconv.ParseFloat(p.Duration, 64)
		pkts = append(pkts, Packet{Size: n, Duration: d})
	}
	return pkts
}
