package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sluicemedia/sluice/storage"
)

// TestRecordedFileNode: a file added before SetNode has no node (a single node's), one added
// after has the store's; an update keeps it whatever the update carries; FilesInState lists the
// store's node's files only (a node repairs what is on its own disk).
func TestRecordedFileNode(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	rec := createRecording(t, s)
	mk := func(name string) storage.RecordedFile {
		return storage.RecordedFile{ID: storage.NewID(), RecordID: rec.ID, Name: name, Path: "archive/" + name,
			Format: "mp4", Created: at(0), State: storage.FileRecording, Node: "ignored"}
	}
	single := mk("a.mp4")
	if err := s.AddFile(ctx, single); err != nil {
		t.Fatal(err)
	}
	s.SetNode("n2")
	onN2 := mk("b.mp4")
	if err := s.AddFile(ctx, onN2); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{single.ID: "", onN2.ID: "n2"} {
		if f, err := s.File(ctx, id); err != nil || f.Node != want {
			t.Errorf("file %s: node %q, %v; want %q", id, f.Node, err, want)
		}
	}
	onN2.Node, onN2.Size = "n9", 42
	if err := s.UpdateFile(ctx, onN2); err != nil {
		t.Fatal(err)
	}
	files, err := s.Files(ctx, rec.ID)
	if err != nil || len(files) != 2 {
		t.Fatalf("Files: %+v, %v", files, err)
	}
	for _, f := range files {
		if want := map[string]string{single.ID: "", onN2.ID: "n2"}[f.ID]; f.Node != want {
			t.Errorf("Files: file %s node %q, want %q", f.Name, f.Node, want)
		}
	}
	if got, err := s.FilesInState(ctx, storage.FileRecording); err != nil || len(got) != 1 || got[0].ID != onN2.ID || got[0].Size != 42 {
		t.Errorf("FilesInState on n2: %+v, %v; want only %s", got, err, onN2.Name)
	}
	s.SetNode("")
	if got, err := s.FilesInState(ctx, storage.FileRecording); err != nil || len(got) != 1 || got[0].ID != single.ID {
		t.Errorf("FilesInState on a single node: %+v, %v; want only %s", got, err, single.Name)
	}
}

// TestFileRemovalQueue: deleting the entry of a file another node holds queues the removal of
// its bytes for that node alone, in the same write; the node's own files, files of no node and
// unknown ids queue nothing; the queue outlives the recording; FileRemovalDone drops it.
func TestFileRemovalQueue(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	rec := createRecording(t, s)
	add := func(node, name string) storage.RecordedFile {
		t.Helper()
		s.SetNode(node)
		f := storage.RecordedFile{ID: storage.NewID(), RecordID: rec.ID, Name: name, Path: rec.ID + "/" + name,
			Format: "mp4", Created: at(0), State: storage.FileComplete, Size: 7}
		if err := s.AddFile(ctx, f); err != nil {
			t.Fatal(err)
		}
		return f
	}
	queued := func(node string) []storage.RecordedFile {
		t.Helper()
		s.SetNode(node)
		fs, err := s.FileRemovals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return fs
	}
	single, onN1, onN2 := add("", "a.mp4"), add("n1", "b.mp4"), add("n2", "c.mp4")
	onN2b := add("n2", "d.mp4")

	// Through n1: its own file and a file of no node go at once; n2's two are queued for n2.
	s.SetNode("n1")
	for _, f := range []storage.RecordedFile{single, onN1, onN2, onN2b} {
		if err := s.DeleteFile(ctx, f.ID); err != nil {
			t.Fatalf("delete %s through n1: %v", f.Name, err)
		}
		if _, err := s.File(ctx, f.ID); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("%s: entry still there after DeleteFile: %v", f.Name, err)
		}
	}
	if err := s.DeleteFile(ctx, onN2.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("deleting %s again: %v, want ErrNotFound", onN2.Name, err)
	}
	if got := queued("n1"); len(got) != 0 {
		t.Errorf("n1's queue: %+v, want none", got)
	}
	if got := queued(""); len(got) != 0 {
		t.Errorf("a store with no node: %+v, want none", got)
	}
	// The recording goes; the bytes on n2 must still go.
	if err := s.Delete(ctx, storage.ModuleRecording, rec.ID); err != nil {
		t.Fatal(err)
	}
	got := queued("n2")
	if len(got) != 2 {
		t.Fatalf("n2's queue: %+v, want %s and %s", got, onN2.Name, onN2b.Name)
	}
	for _, f := range got {
		want := map[string]storage.RecordedFile{onN2.ID: onN2, onN2b.ID: onN2b}[f.ID]
		if f.Path != want.Path || f.RecordID != rec.ID || f.Node != "n2" || f.Size != 7 {
			t.Errorf("queued %+v, want the file %+v on n2", f, want)
		}
	}
	if err := s.FileRemovalDone(ctx, onN2.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.FileRemovalDone(ctx, onN2.ID); err != nil {
		t.Errorf("done twice: %v", err)
	}
	if got := queued("n2"); len(got) != 1 || got[0].ID != onN2b.ID {
		t.Errorf("n2's queue after one is done: %+v, want only %s", got, onN2b.Name)
	}
}
