package storage_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

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

// TestRetireNode: a node down for longer than the TTL leaves the cluster with the entries of
// the files it holds (returned oldest first) and the removals queued for it, in one write; its
// leases keep their rows with no node. A node that heartbeats, an unknown id and a SQLite store
// change nothing; other nodes' files and queues stay.
func TestRetireNode(t *testing.T) {
	ctx := context.Background()
	target := storage.NewTestTarget(t)
	s := openTarget(t, target)
	if storage.PassBackend() == "sqlite" {
		_, _, err := s.RetireNode(ctx, "gone", time.Second)
		if err == nil || errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrNodeRunning) {
			t.Fatalf("RetireNode on SQLite: %v, want the error that it has no nodes", err)
		}
		return
	}
	db, err := sql.Open("pgx", target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for id, ago := range map[string]string{"gone": "1 minute", "up": "0 seconds"} {
		exec(`INSERT INTO nodes (id, api_url, public_url, started, heartbeat) VALUES ($1, '', '', now(), now() - $2::interval)`, id, ago)
	}
	rec := createRecording(t, s)
	exec(`INSERT INTO leases (record_id, node_id, generation, expires) VALUES ($1, 'gone', 3, now() - interval '1 minute')`, rec.ID)
	add := func(node, name string, created time.Duration) storage.RecordedFile {
		t.Helper()
		s.SetNode(node)
		f := storage.RecordedFile{ID: storage.NewID(), RecordID: rec.ID, Name: name, Path: rec.ID + "/" + name,
			Format: "mp4", Created: at(created), State: storage.FileComplete, Size: 7}
		if err := s.AddFile(ctx, f); err != nil {
			t.Fatal(err)
		}
		return f
	}
	g1, g2, g3 := add("gone", "g1.mp4", 0), add("gone", "g2.mp4", 2*time.Second), add("gone", "g3.mp4", time.Second)
	u1, u2, none := add("up", "u1.mp4", 0), add("up", "u2.mp4", 0), add("", "x.mp4", 0)
	// Through a third node: a removal queued for each.
	s.SetNode("n9")
	for _, f := range []storage.RecordedFile{g1, u2} {
		if err := s.DeleteFile(ctx, f.ID); err != nil {
			t.Fatal(err)
		}
	}
	queued := func(node string) int {
		t.Helper()
		s.SetNode(node)
		fs, err := s.FileRemovals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(fs)
	}

	if _, _, err := s.RetireNode(ctx, "up", 10*time.Second); !errors.Is(err, storage.ErrNodeRunning) {
		t.Errorf("retire a node that heartbeats: %v, want ErrNodeRunning", err)
	}
	if _, _, err := s.RetireNode(ctx, "nobody", 10*time.Second); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("retire an unknown node: %v, want ErrNotFound", err)
	}
	files, q, err := s.RetireNode(ctx, "gone", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].ID != g3.ID || files[1].ID != g2.ID || files[0].Node != "gone" || files[0].Path != g3.Path || q != 1 {
		t.Errorf("retired: %+v and %d queued removals; want %s then %s, and 1", files, q, g3.Name, g2.Name)
	}
	for _, f := range []storage.RecordedFile{g2, g3} {
		if _, err := s.File(ctx, f.ID); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("%s of the retired node still there: %v", f.Name, err)
		}
	}
	for _, f := range []storage.RecordedFile{u1, none} {
		if _, err := s.File(ctx, f.ID); err != nil {
			t.Errorf("%s of another node: %v", f.Name, err)
		}
	}
	if n := queued("gone"); n != 0 {
		t.Errorf("%d removals still queued for the retired node", n)
	}
	if n := queued("up"); n != 1 {
		t.Errorf("%d removals queued for up, want 1", n)
	}
	var nodes int
	var leaseNode sql.NullString
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM nodes WHERE id = 'gone'`).Scan(&nodes); err != nil || nodes != 0 {
		t.Errorf("the retired node's row: %d, %v", nodes, err)
	}
	if err := db.QueryRowContext(ctx, `SELECT node_id FROM leases WHERE record_id = $1`, rec.ID).Scan(&leaseNode); err != nil || leaseNode.Valid {
		t.Errorf("the retired node's lease: node %v, %v; want the row with no node", leaseNode, err)
	}
	if _, _, err := s.RetireNode(ctx, "gone", 10*time.Second); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("retire it again: %v, want ErrNotFound", err)
	}
}
