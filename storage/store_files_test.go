package storage_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/storage"
)

func TestRecordedFiles(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	rec := createRecording(t, s)
	mk := func(d time.Duration, state string) storage.RecordedFile {
		return storage.RecordedFile{
			ID: storage.NewID(), RecordID: rec.ID, Name: "archive.mp4", Path: "archive/archive.mp4",
			Format: "mp4", Size: 1 << 20, Duration: 12.5, Created: at(d).UTC(), State: state,
		}
	}
	second, first := mk(time.Minute, storage.FileRecording), mk(0, storage.FileComplete)
	ended := at(30 * time.Second).UTC()
	first.Ended = &ended
	for _, f := range []storage.RecordedFile{second, first} {
		if err := s.AddFile(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	files, err := s.Files(ctx, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(files, []storage.RecordedFile{first, second}) {
		t.Errorf("Files =\n%+v\nwant\n%+v", files, []storage.RecordedFile{first, second})
	}
	got, err := s.File(ctx, first.ID)
	if err != nil || !reflect.DeepEqual(got, first) {
		t.Errorf("File = %+v, %v", got, err)
	}

	rec2 := mk(2*time.Minute, storage.FileRecording)
	if err := s.AddFile(ctx, rec2); err != nil {
		t.Fatal(err)
	}
	if inState, err := s.FilesInState(ctx, storage.FileRecording); err != nil || len(inState) != 2 ||
		inState[0].ID != second.ID || inState[1].ID != rec2.ID {
		t.Errorf("FilesInState = %+v, %v", inState, err)
	}
	second.State, second.Size = storage.FileRepaired, 999
	if err := s.UpdateFile(ctx, second); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.File(ctx, second.ID); !reflect.DeepEqual(got, second) {
		t.Errorf("after UpdateFile: %+v", got)
	}
	if inState, _ := s.FilesInState(ctx, storage.FileRepaired); len(inState) != 1 {
		t.Errorf("repaired files = %+v", inState)
	}

	if err := s.DeleteFile(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		s.DeleteFile(ctx, first.ID),
		s.UpdateFile(ctx, first),
		func() error { _, err := s.File(ctx, first.ID); return err }(),
	} {
		if !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("on a deleted file: %v, want ErrNotFound", err)
		}
	}
	orphan := mk(0, storage.FileRecording)
	orphan.RecordID = storage.NewID()
	if err := s.AddFile(ctx, orphan); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("file of an unknown recording: %v, want ErrNotFound", err)
	}
	if err := s.AddFile(ctx, storage.RecordedFile{RecordID: rec.ID}); err == nil {
		t.Error("file without id accepted")
	}
}
