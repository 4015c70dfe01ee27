package storage_test

import (
	"context"
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
