package storage_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/storage"
)

// allKinds returns one record of every kind with every field set, times in a non-UTC zone and
// with nanoseconds.
func allKinds() []storage.Record {
	base := func(d time.Duration) storage.Base {
		return storage.Base{ID: storage.NewID(), Active: true, UserID: storage.NewID(), Created: at(d), Modified: at(d + time.Minute)}
	}
	fps := 29.97
	return []storage.Record{
		&storage.Player{
			Base: base(0), VodName: `lobby <&> "ü"`,
			Input: storage.Input{
				InputType: "INPUT_TYPE_GENERATE_TEST_VIDEO", EncodingRate: 24, SoundHz: 216,
				ResolutionWidth: 1920, ResolutionHeight: 1080, VideoDurationSec: 3600, TestVideoBitrate: 6000,
			},
			VodPort: 8000, InitialLiveManifestSize: 3, LiveSyncDurationCount: 2,
			HLSFragmentSize: 2.5, HLSFragmentLength: 60, DASHFragmentSize: 4, DASHFragmentLength: 120,
			Transcoding: &storage.Transcoding{
				VideoTranscoding: "libx264", OutputVideoBitrate: intp(4000), ForceKeyFrames: float64(2),
				GOP: intp(48), FrameWidth: intp(1280), FrameHeight: intp(0), Preset: "veryfast", Tune: "zerolatency",
				CRF: intp(23), PixFmt: "yuv420p", FilterFPS: &fps, AudioTranscoding: "aac",
				OutputAudioBitrate: intp(128), SampleRate: intp(48000), Slices: intp(1), Cores: intp(2),
			},
		},
		&storage.Restream{
			Base: base(time.Second), RestreamName: "to youtube", RestreamType: "RESTREAM_TYPE_SRT_TO_RTMP",
			Input: storage.Input{
				ID: storage.NewID(), InputType: "INPUT_TYPE_SRT_LISTEN",
				InputStreamListenPort: &storage.ListenPort{Port: 9000, Transport: storage.UDP},
				InputStreamURL:        "srt://:9000?latency=200", ModuleName: "m", ModuleType: "t",
			},
			Output: storage.Output{ID: storage.NewID(), OutputType: "OUTPUT_TYPE_OTHER_RTMP_URL",
				OutputStreamURL: "rtmp://a.rtmp.youtube.com/live2", OutputStreamKey: "key"},
			Transcoding: &storage.Transcoding{ForceKeyFrames: "expr:gte(t,n_forced*2)"},
		},
		&storage.Recording{
			Base: base(2 * time.Second), RecordingName: "archive", RecordingType: "RECORDING_STREAM_TO_FILE",
			Input:        storage.Input{InputType: "INPUT_TYPE_RTMP_URL", InputStreamURL: "rtmp://host/live/key"},
			OutputFormat: "mp4", MemoryDurationSec: 300,
		},
		&storage.SRTServer{
			Base: base(3 * time.Second), ServerName: "Main SRT", ServerPort: 9001, ServerLatency: 200,
			ServerPassphrase: "0123456789abc", ServerPbkeylen: 16, ServerMaxbw: -1, ServerTimeout: 10,
			PublisherPrefix: "publisher", ReceiverPrefix: "receiver",
		},
		&storage.RTMPServer{Base: base(4 * time.Second), ServerName: "Main RTMP", ServerPort: 1935},
	}
}

// newOf returns a new zero record of the same kind as r.
func newOf(r storage.Record) storage.Record {
	return reflect.New(reflect.TypeOf(r).Elem()).Interface().(storage.Record)
}

func TestRecordRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	for _, r := range allKinds() {
		givenCreated := r.Meta().Created
		if err := s.Create(ctx, r); err != nil {
			t.Fatalf("Create %s: %v", r.Module(), err)
		}
		if loc := r.Meta().Created.Location(); loc != time.UTC {
			t.Errorf("%s: Created in %v after Create, want UTC", r.Module(), loc)
		}
		if !r.Meta().Created.Equal(givenCreated) {
			t.Errorf("%s: Created changed from %v to %v", r.Module(), givenCreated, r.Meta().Created)
		}
		got := newOf(r)
		if err := s.Get(ctx, r.Module(), r.Meta().ID, got); err != nil {
			t.Fatalf("Get %s: %v", r.Module(), err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("%s round trip:\n got %+v\nwant %+v", r.Module(), got, r)
		}
		if got.Meta().Created.Nanosecond() != 123456789 {
			t.Errorf("%s: lost precision: %v", r.Module(), got.Meta().Created)
		}
	}
}

func TestGetUnknown(t *testing.T) {
	s := openStore(t)
	p := createPlayer(t, s, "a", 8000)
	var into storage.Player
	if err := s.Get(context.Background(), storage.ModuleVOD, storage.NewID(), &into); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Get unknown id: %v, want ErrNotFound", err)
	}
	// The id exists, but in another module.
	var rs storage.Restream
	if err := s.Get(context.Background(), storage.ModuleRestream, p.ID, &rs); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Get in wrong module: %v, want ErrNotFound", err)
	}
}

func TestCreateFillsIDAndTimes(t *testing.T) {
	s := openStore(t)
	r := &storage.RTMPServer{ServerName: "x", ServerPort: 1935}
	if err := s.Create(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if !storage.ValidID(r.ID) || r.Created.IsZero() || !r.Modified.Equal(r.Created) {
		t.Errorf("got id %q created %v modified %v", r.ID, r.Created, r.Modified)
	}
}

func TestDuplicateName(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	if err := s.Create(ctx, player("lobby", 8000)); err != nil {
		t.Fatal(err)
	}
	err := s.Create(ctx, player("lobby", 8001))
	if !errors.Is(err, storage.ErrNameTaken) {
		t.Fatalf("second lobby: %v, want ErrNameTaken", err)
	}
	// Nothing of the refused record stays: its port is free.
	if _, held, _ := s.PortHolder(ctx, storage.PortKey{Port: 8001, Transport: storage.TCP}); held {
		t.Error("refused record kept its port claim")
	}
	// The same name in another module is fine.
	if err := s.Create(ctx, listenRestream("lobby", 9000, storage.UDP)); err != nil {
		t.Errorf("lobby restream: %v", err)
	}
	// Update onto a taken name.
	other := createPlayer(t, s, "hall", 8002)
	other.VodName = "lobby"
	if err := s.Update(ctx, other); !errors.Is(err, storage.ErrNameTaken) {
		t.Errorf("rename onto lobby: %v, want ErrNameTaken", err)
	}
}

func TestUpdate(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	p := createPlayer(t, s, "lobby", 8000)
	created := p.Created
	p.VodName, p.Active, p.Created, p.Modified = "hall", true, time.Time{}, at(time.Hour)
	if err := s.Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	if !p.Created.Equal(created) {
		t.Errorf("Update changed Created to %v, want %v", p.Created, created)
	}
	got, err := storage.Load[storage.Player](ctx, s, storage.ModuleVOD, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, p) {
		t.Errorf("after Update:\n got %+v\nwant %+v", got, p)
	}
	if err := s.Create(ctx, player("lobby", 8001)); err != nil {
		t.Errorf("old name not free after rename: %v", err)
	}
	unknown := player("ghost", 8100)
	if err := s.Update(ctx, unknown); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Update unknown: %v, want ErrNotFound", err)
	}
}

func TestSetActive(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	p := player(`odd <name> & "quotes" ü`, 8000)
	p.HLSFragmentSize = 0.1
	if err := s.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	when := at(2 * time.Hour)
	if err := s.SetActive(ctx, storage.ModuleVOD, p.ID, true, when); err != nil {
		t.Fatal(err)
	}
	refs, err := s.ListActive(ctx)
	if err != nil || len(refs) != 1 || refs[0] != (storage.RecordRef{Module: storage.ModuleVOD, ID: p.ID}) {
		t.Fatalf("ListActive = %v, %v", refs, err)
	}
	got, err := storage.Load[storage.Player](ctx, s, storage.ModuleVOD, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	p.Active, p.Modified = true, when.UTC()
	if !reflect.DeepEqual(got, p) {
		t.Errorf("after SetActive:\n got %+v\nwant %+v", got, p)
	}
	// The document is still what json.Marshal makes of the record.
	docs, err := s.ListDocs(ctx, storage.ModuleVOD)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(p)
	if string(docs[0]) != string(want) {
		t.Errorf("doc after SetActive:\n got %s\nwant %s", docs[0], want)
	}
	if err := s.SetActive(ctx, storage.ModuleVOD, p.ID, false, when); err != nil {
		t.Fatal(err)
	}
	if refs, _ := s.ListActive(ctx); len(refs) != 0 {
		t.Errorf("ListActive after stop = %v", refs)
	}
	if err := s.SetActive(ctx, storage.ModuleRestream, p.ID, true, when); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("SetActive in wrong module: %v, want ErrNotFound", err)
	}
}

func TestListOrder(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	// Created out of order: the list follows created, then id.
	names := []string{"c", "a", "b"}
	offsets := []time.Duration{2 * time.Second, 0, time.Second}
	for i, n := range names {
		p := player(n, 8000+i)
		p.Created = at(offsets[i])
		if err := s.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Create(ctx, rtmpServer("other module", 1935)); err != nil {
		t.Fatal(err)
	}
	ps, err := storage.List[storage.Player](ctx, s, storage.ModuleVOD)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.VodName)
	}
	if !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Errorf("List order = %v", got)
	}
	if none, err := storage.List[storage.Recording](ctx, s, storage.ModuleRecording); err != nil || len(none) != 0 {
		t.Errorf("empty module: %v, %v", none, err)
	}
}

func TestDelete(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	rec := &storage.Recording{
		Base: storage.Base{ID: storage.NewID()}, RecordingName: "archive",
		Input: storage.Input{InputType: "INPUT_TYPE_UDP_LISTEN", InputStreamListenPort: &storage.ListenPort{Port: 5000, Transport: storage.UDP}},
	}
	if err := s.Create(ctx, rec); err != nil {
		t.Fatal(err)
	}
	f := storage.RecordedFile{ID: storage.NewID(), RecordID: rec.ID, Name: "a.mp4", State: storage.FileComplete}
	if err := s.AddFile(ctx, f); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, storage.ModuleVOD, rec.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Delete in wrong module: %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, storage.ModuleRecording, rec.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, storage.ModuleRecording, rec.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("second Delete: %v, want ErrNotFound", err)
	}
	if _, err := s.File(ctx, f.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("file after Delete: %v, want ErrNotFound", err)
	}
	if keys := claimsOf(t, s, rec.ID); len(keys) != 0 {
		t.Errorf("claims after Delete: %v", keys)
	}
	// Name and port are free again.
	again := &storage.Recording{
		Base: storage.Base{ID: storage.NewID()}, RecordingName: "archive",
		Input: storage.Input{InputType: "INPUT_TYPE_UDP_LISTEN", InputStreamListenPort: &storage.ListenPort{Port: 5000, Transport: storage.UDP}},
	}
	if err := s.Create(ctx, again); err != nil {
		t.Errorf("re-create after Delete: %v", err)
	}
}
