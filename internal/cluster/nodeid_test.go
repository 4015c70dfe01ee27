package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestKeptID: the first call makes an id (the host name and a suffix) and writes it to the
// folder's node-id file, made anew if the folder is missing; later calls read the same id
// back. An operator's file is read with the white space around it passed over.
func TestKeptID(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	id, made, err := KeptID(dir)
	if err != nil || !made {
		t.Fatalf("first call: %q, made %v, %v", id, made, err)
	}
	host, _ := os.Hostname()
	if host == "" {
		host = "node"
	}
	if len(id) > maxIDLen || !strings.HasPrefix(id, host+"-") || len(id) != len(host)+7 {
		t.Errorf("made id %q (host %q)", id, host)
	}
	b, err := os.ReadFile(filepath.Join(dir, IDFile))
	if err != nil || string(b) != id+"\n" {
		t.Fatalf("the file holds %q, %v; want %q", b, err, id+"\n")
	}
	for range 2 {
		again, made, err := KeptID(dir)
		if err != nil || made || again != id {
			t.Errorf("again: %q, made %v, %v; want %q, not made", again, made, err, id)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, IDFile), []byte("  node-a  \r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if id, made, err := KeptID(dir); err != nil || made || id != "node-a" {
		t.Errorf("operator's file: %q, made %v, %v; want node-a", id, made, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the folder holds %d files, want the id file alone", len(ents))
	}
}

// TestKeptIDOnce: servers starting at once on one folder all get the one id that was written,
// and one of them made it.
func TestKeptIDOnce(t *testing.T) {
	for range 20 {
		dir := t.TempDir()
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			ids   = map[string]int{}
			makes int
		)
		for range 8 {
			wg.Go(func() {
				id, made, err := KeptID(dir)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					t.Error(err)
				}
				ids[id]++
				if made {
					makes++
				}
			})
		}
		wg.Wait()
		b, _ := os.ReadFile(filepath.Join(dir, IDFile))
		if len(ids) != 1 || makes != 1 || ids[strings.TrimSpace(string(b))] != 8 {
			t.Fatalf("ids %v, %d made, the file holds %q", ids, makes, b)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Fatalf("the folder holds %d files, want the id file alone", len(ents))
		}
	}
}

// TestKeptIDBadFile: a file that holds no usable id is an error naming it, and is left as it
// is.
func TestKeptIDBadFile(t *testing.T) {
	for name, content := range map[string]string{
		"empty":         "",
		"blank":         " \n\n",
		"too long":      strings.Repeat("n", maxIDLen+1) + "\n",
		"much too long": strings.Repeat("n", 5000),
		"two lines":     "node-a\nnode-b\n",
		"a tab":         "node\ta",
		"not UTF-8":     "node-\xff",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, IDFile)
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			id, made, err := KeptID(dir)
			if err == nil || made || id != "" || !strings.Contains(err.Error(), path) {
				t.Errorf("%q: %q, made %v, %v; want an error naming %s", content, id, made, err, path)
			}
			if b, _ := os.ReadFile(path); string(b) != content {
				t.Errorf("the file now holds %q", b)
			}
		})
	}
	// Exactly 100 bytes is an id.
	dir := t.TempDir()
	long := strings.Repeat("n", maxIDLen)
	if err := os.WriteFile(filepath.Join(dir, IDFile), []byte(long+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if id, _, err := KeptID(dir); err != nil || id != long {
		t.Errorf("a 100-byte id: %q, %v", id, err)
	}
}
