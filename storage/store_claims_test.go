package storage_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/sluicemedia/sluice/storage"
)

func TestPortConflictBetweenEntities(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	lobby := createPlayer(t, s, "lobby", 8000)
	// An RTMP server on 8000/TCP collides with the player's vod_port.
	err := s.Create(ctx, rtmpServer("rtmp", 8000))
	var pt *storage.PortTakenError
	if !errors.As(err, &pt) || !errors.Is(err, storage.ErrPortTaken) {
		t.Fatalf("Create on a held port: %v, want *PortTakenError", err)
	}
	if pt.Key != (storage.PortKey{Port: 8000, Transport: storage.TCP}) ||
		pt.Holder.EntityID != lobby.ID || pt.Holder.Module != storage.ModuleVOD || pt.Holder.EntityName != "lobby" {
		t.Errorf("PortTakenError = %+v", pt)
	}
	if want := `port 8000/TCP is held by MODULE_VOD "lobby"`; err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
	// The refused record was not stored.
	if docs, _ := s.ListDocs(ctx, storage.ModuleRTMPServers); len(docs) != 0 {
		t.Errorf("refused record stored: %s", docs)
	}
	// Same port, other transport: fine. The transport is accepted in any case.
	if err := s.Create(ctx, listenRestream("udp in", 8000, "udp")); err != nil {
		t.Errorf("8000/UDP: %v", err)
	}
	if h, ok, err := s.PortHolder(ctx, storage.PortKey{Port: 8000, Transport: "udp"}); err != nil || !ok || h.Transport != storage.UDP {
		t.Errorf("PortHolder 8000/udp = %+v, %v, %v", h, ok, err)
	}
}

func TestPortRepeatedWithinRecord(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	p := player("lobby", 8000)
	p.Input = storage.Input{InputType: "INPUT_TYPE_RTMP_LISTEN", InputStreamListenPort: &storage.ListenPort{Port: 8000, Transport: "tcp"}}
	err := s.Create(ctx, p)
	var pt *storage.PortTakenError
	if !errors.As(err, &pt) || !errors.Is(err, storage.ErrPortTaken) {
		t.Fatalf("own keys repeat: %v, want *PortTakenError", err)
	}
	if pt.Holder.EntityName != "lobby" || pt.Holder.ID != "" {
		t.Errorf("holder = %+v", pt.Holder)
	}
	if _, err := storage.Load[storage.Player](ctx, s, storage.ModuleVOD, p.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("record stored despite the conflict: %v", err)
	}
}

func TestUpdateClaims(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	p := player("lobby", 8000)
	p.Input = storage.Input{InputType: "INPUT_TYPE_SRT_LISTEN", InputStreamListenPort: &storage.ListenPort{Port: 9000, Transport: storage.UDP}}
	if err := s.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	before, _, _ := s.PortHolder(ctx, storage.PortKey{Port: 8000, Transport: storage.TCP})

	// Keep 8000/TCP, move the input from 9000/UDP to 9001/UDP, rename.
	p.VodName = "hall"
	p.Input.InputStreamListenPort.Port = 9001
	if err := s.Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	want := []storage.PortKey{{Port: 8000, Transport: storage.TCP}, {Port: 9001, Transport: storage.UDP}}
	if got := claimsOf(t, s, p.ID); !reflect.DeepEqual(got, want) {
		t.Errorf("claims after Update = %v, want %v", got, want)
	}
	kept, _, _ := s.PortHolder(ctx, storage.PortKey{Port: 8000, Transport: storage.TCP})
	if kept.ID != before.ID || !kept.Created.Equal(before.Created) || kept.EntityName != "hall" {
		t.Errorf("kept claim %+v, was %+v", kept, before)
	}
	// 9000/UDP is free again.
	if err := s.Create(ctx, listenRestream("srt in", 9000, storage.UDP)); err != nil {
		t.Errorf("old port not freed: %v", err)
	}
	// Moving onto a port another entity holds fails and changes nothing.
	p.Input.InputStreamListenPort.Port = 9000
	p.VodName = "renamed"
	err := s.Update(ctx, p)
	if !errors.Is(err, storage.ErrPortTaken) {
		t.Fatalf("Update onto held port: %v, want ErrPortTaken", err)
	}
	if got := claimsOf(t, s, p.ID); !reflect.DeepEqual(got, want) {
		t.Errorf("claims after refused Update = %v, want %v", got, want)
	}
	if got, _ := storage.Load[storage.Player](ctx, s, storage.ModuleVOD, p.ID); got.VodName != "hall" {
		t.Errorf("refused Update renamed the record to %q", got.VodName)
	}
	// A record may swap a key between its own roles: vod_port onto the input's old port.
	p.Input.InputStreamListenPort = &storage.ListenPort{Port: 8000, Transport: storage.UDP}
	p.VodPort = 9001
	p.Input.InputStreamListenPort.Transport = storage.UDP
	if err := s.Update(ctx, p); err != nil {
		t.Fatalf("swap: %v", err)
	}
}

func TestReplaceClaims(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	api := []storage.PortKey{{Port: 8080, Transport: storage.TCP}}
	if err := s.ReplaceClaims(ctx, storage.ModuleAPI, "api", "api", api); err != nil {
		t.Fatal(err)
	}
	// Again at the next start: idempotent.
	if err := s.ReplaceClaims(ctx, storage.ModuleAPI, "api", "api", api); err != nil {
		t.Fatal(err)
	}
	err := s.Create(ctx, player("lobby", 8080))
	if !errors.Is(err, storage.ErrPortTaken) || err.Error() != `port 8080/TCP is held by MODULE_API "api"` {
		t.Errorf("player on the API port: %v", err)
	}
	if err := s.Create(ctx, player("lobby", 8000)); err != nil {
		t.Fatal(err)
	}
	if err := s.ReplaceClaims(ctx, storage.ModuleAPI, "api", "api", []storage.PortKey{{Port: 8000, Transport: storage.TCP}}); !errors.Is(err, storage.ErrPortTaken) {
		t.Errorf("API onto the player's port: %v", err)
	}
	if err := s.ReplaceClaims(ctx, storage.ModuleAPI, "api", "api", []storage.PortKey{{Port: 0, Transport: storage.TCP}}); err == nil || errors.Is(err, storage.ErrPortTaken) {
		t.Errorf("port 0: %v, want a plain error", err)
	}
	claims, err := s.PortClaims(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(claims) != 2 || claims[0].Port != 8000 || claims[1].Port != 8080 || claims[1].Module != storage.ModuleAPI ||
		!storage.ValidID(claims[0].ID) || claims[0].Created.IsZero() {
		t.Errorf("PortClaims = %+v", claims)
	}
	if err := s.ReplaceClaims(ctx, storage.ModuleAPI, "api", "api", nil); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.PortHolder(ctx, storage.PortKey{Port: 8080, Transport: storage.TCP}); ok {
		t.Error("8080 still held after ReplaceClaims(nil)")
	}
}
