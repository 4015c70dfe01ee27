package api

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sluicemedia/sluice/storage"
)

// fakeStore is an in-memory Store that enforces unique names per module and port claims like
// storage.Store, returning the storage errors.
type fakeStore struct {
	mu       sync.Mutex
	docs     map[storage.Module][]fakeDoc
	claims   []storage.PortClaim
	files    []storage.RecordedFile
	users    []storage.User
	settings map[string]string
	revoked  map[string]time.Time
	// notBefore is each user's token "not before"; revision counts the revocation changes.
	notBefore map[string]time.Time
	revision  int64
	// writes is the revocation stamp: it counts the revocation writes.
	writes int64
	// reads counts the reads authentication may make: AuthRevision, Revocations, UserByID.
	reads map[string]int
	// stampFrozen keeps the revocation stamp still, as a file system whose modification times are
	// too coarse to show a commit would.
	stampFrozen bool
	// stampMoving makes every RevocationStamp differ from the last, as revocations committed
	// all the time would.
	stampMoving bool
	// stampReads counts the RevocationStamp calls.
	stampReads int
	// revisionGate, when set, holds AuthRevision until it is closed.
	revisionGate chan struct{}
	// failRevision, when set, is returned by AuthRevision (a broken store).
	failRevision error
	// failList, when set, is returned by ListDocs (a broken store).
	failList error
}

type fakeDoc struct {
	id, name string
	doc      []byte
}

var _ Store = (*fakeStore)(nil)

func newFakeStore() *fakeStore {
	return &fakeStore{docs: map[storage.Module][]fakeDoc{}, settings: map[string]string{}, revoked: map[string]time.Time{},
		notBefore: map[string]time.Time{}, reads: map[string]int{}}
}

func (s *fakeStore) find(m storage.Module, id string) int {
	return slices.IndexFunc(s.docs[m], func(d fakeDoc) bool { return d.id == id })
}

func (s *fakeStore) Create(_ context.Context, r storage.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := r.Meta()
	if b.ID == "" {
		b.ID = storage.NewID()
	}
	if b.Created.IsZero() {
		b.Created = time.Now()
	}
	if b.Modified.IsZero() {
		b.Modified = b.Created
	}
	b.Created, b.Modified = b.Created.UTC(), b.Modified.UTC()
	d, err := s.admit(r)
	if err != nil {
		return err
	}
	s.docs[r.Module()] = append(s.docs[r.Module()], d)
	return nil
}

// admit checks r's unique name and claims its ports as the store does, and returns its
// document. The caller holds s.mu.
func (s *fakeStore) admit(r storage.Record) (fakeDoc, error) {
	if err := s.checkName(r); err != nil {
		return fakeDoc{}, err
	}
	if err := s.claim(r); err != nil {
		return fakeDoc{}, err
	}
	doc, err := json.Marshal(r)
	if err != nil {
		return fakeDoc{}, err
	}
	return fakeDoc{id: r.Meta().ID, name: r.UniqueName(), doc: doc}, nil
}

func (s *fakeStore) checkName(r storage.Record) error {
	for _, d := range s.docs[r.Module()] {
		if d.name == r.UniqueName() && d.id != r.Meta().ID {
			return fmt.Errorf("%s %q: %w", r.Module(), d.name, storage.ErrNameTaken)
		}
	}
	return nil
}

// claim replaces the claims of r with its PortKeys, or fails with a *storage.PortTakenError.
func (s *fakeStore) claim(r storage.Record) error {
	b := r.Meta()
	seen := map[storage.PortKey]bool{}
	for _, k := range r.PortKeys() {
		k.Transport = strings.ToUpper(k.Transport)
		if seen[k] {
			return &storage.PortTakenError{Key: k, Holder: storage.PortClaim{Port: k.Port, Transport: k.Transport,
				Module: r.Module(), EntityID: b.ID, EntityName: r.UniqueName()}}
		}
		seen[k] = true
		for _, c := range s.claims {
			if c.Key() == k && !(c.EntityID == b.ID && c.Module == r.Module()) {
				return &storage.PortTakenError{Key: k, Holder: c}
			}
		}
	}
	kept := s.claims[:0:0]
	held := map[storage.PortKey]bool{}
	for _, c := range s.claims {
		if c.EntityID == b.ID && c.Module == r.Module() {
			if !seen[c.Key()] {
				continue
			}
			held[c.Key()] = true
			c.EntityName = r.UniqueName()
		}
		kept = append(kept, c)
	}
	for k := range seen {
		if !held[k] {
			kept = append(kept, storage.PortClaim{ID: storage.NewID(), Port: k.Port, Transport: k.Transport,
				Module: r.Module(), EntityID: b.ID, EntityName: r.UniqueName(), Created: time.Now().UTC()})
		}
	}
	s.claims = kept
	return nil
}

func (s *fakeStore) Update(_ context.Context, r storage.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := r.Meta()
	i := s.find(r.Module(), b.ID)
	if i < 0 {
		return fmt.Errorf("%s %q: %w", r.Module(), b.ID, storage.ErrNotFound)
	}
	var old storage.Base
	_ = json.Unmarshal(s.docs[r.Module()][i].doc, &old)
	b.Created = old.Created
	if b.Modified.IsZero() {
		b.Modified = time.Now()
	}
	b.Modified = b.Modified.UTC()
	d, err := s.admit(r)
	if err != nil {
		return err
	}
	s.docs[r.Module()][i] = d
	return nil
}

func (s *fakeStore) Get(_ context.Context, m storage.Module, id string, into storage.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.find(m, id)
	if i < 0 {
		return fmt.Errorf("%s %q: %w", m, id, storage.ErrNotFound)
	}
	return json.Unmarshal(s.docs[m][i].doc, into)
}

func (s *fakeStore) Delete(_ context.Context, m storage.Module, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.find(m, id)
	if i < 0 {
		return fmt.Errorf("%s %q: %w", m, id, storage.ErrNotFound)
	}
	s.docs[m] = slices.Delete(s.docs[m], i, i+1)
	s.claims = slices.DeleteFunc(s.claims, func(c storage.PortClaim) bool { return c.EntityID == id && c.Module == m })
	s.files = slices.DeleteFunc(s.files, func(f storage.RecordedFile) bool { return f.RecordID == id })
	return nil
}

func (s *fakeStore) SetActive(_ context.Context, m storage.Module, id string, active bool, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.find(m, id)
	if i < 0 {
		return fmt.Errorf("%s %q: %w", m, id, storage.ErrNotFound)
	}
	var doc map[string]any
	if err := json.Unmarshal(s.docs[m][i].doc, &doc); err != nil {
		return err
	}
	doc["active"], doc["modified"] = active, at.UTC()
	raw, err := json.Marshal(doc)
	s.docs[m][i].doc = raw
	return err
}

func (s *fakeStore) ListDocs(_ context.Context, m storage.Module) ([][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failList != nil {
		return nil, s.failList
	}
	out := make([][]byte, 0, len(s.docs[m]))
	for _, d := range s.docs[m] {
		out = append(out, slices.Clone(d.doc))
	}
	return out, nil
}

// ListPage applies q in memory with the API's own comparison rules (list.go); the SQL of
// storage.Store is held to the same rules by TestStoreQueryMatchesMemory.
func (s *fakeStore) ListPage(ctx context.Context, m storage.Module, q storage.ListQuery) ([][]byte, error) {
	raw, docs, err := s.decoded(ctx, m)
	if err != nil {
		return nil, err
	}
	lq := listQuery{limit: q.Limit, skip: q.Skip, filter: map[string]any{}}
	for _, f := range q.Filter {
		lq.filter[f.Key] = f.Value
	}
	for _, k := range q.Sort {
		dir := 1
		if k.Desc {
			dir = -1
		}
		lq.sort = append(lq.sort, sortKey{field: k.Key, dir: dir})
	}
	idx, _ := lq.pick(docs)
	out := make([][]byte, len(idx))
	for i, j := range idx {
		out[i] = raw[j]
	}
	return out, nil
}

func (s *fakeStore) Count(ctx context.Context, m storage.Module, filter []storage.Match) (int, error) {
	docs, err := s.ListPage(ctx, m, storage.ListQuery{Filter: filter, Limit: -1})
	return len(docs), err
}

// decoded returns the module's documents, raw and decoded, with created and modified as
// fixed-width text so that they sort as times.
func (s *fakeStore) decoded(ctx context.Context, m storage.Module) ([][]byte, []map[string]any, error) {
	raw, err := s.ListDocs(ctx, m)
	if err != nil {
		return nil, nil, err
	}
	docs := make([]map[string]any, len(raw))
	for i, r := range raw {
		if docs[i], err = decodeObject(r); err != nil {
			return nil, nil, err
		}
		for _, k := range []string{"created", "modified"} {
			if t, err := time.Parse(time.RFC3339Nano, fmt.Sprint(docs[i][k])); err == nil {
				docs[i][k] = t.UTC().Format("2006-01-02T15:04:05.000000000Z")
			}
		}
	}
	return raw, docs, nil
}

func (s *fakeStore) PortClaims(context.Context) ([]storage.PortClaim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.claims), nil
}

func (s *fakeStore) Files(_ context.Context, recordID string) ([]storage.RecordedFile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []storage.RecordedFile
	for _, f := range s.files {
		if f.RecordID == recordID {
			out = append(out, f)
		}
	}
	return out, nil
}

func (s *fakeStore) File(_ context.Context, id string) (storage.RecordedFile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.files {
		if f.ID == id {
			return f, nil
		}
	}
	return storage.RecordedFile{}, fmt.Errorf("recorded file %q: %w", id, storage.ErrNotFound)
}

func (s *fakeStore) DeleteFile(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.files)
	s.files = slices.DeleteFunc(s.files, func(f storage.RecordedFile) bool { return f.ID == id })
	if len(s.files) == n {
		return fmt.Errorf("recorded file %q: %w", id, storage.ErrNotFound)
	}
	return nil
}

func (s *fakeStore) addFile(f storage.RecordedFile) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files = append(s.files, f)
}

func (s *fakeStore) CreateUser(_ context.Context, u storage.User) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.users {
		if strings.EqualFold(o.Name, u.Name) {
			return fmt.Errorf("user %q: %w", u.Name, storage.ErrNameTaken)
		}
	}
	s.users = append(s.users, u)
	return nil
}

func (s *fakeStore) user(match func(storage.User) bool) (storage.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.users {
		if match(u) {
			return u, nil
		}
	}
	return storage.User{}, fmt.Errorf("user: %w", storage.ErrNotFound)
}

func (s *fakeStore) UserByName(_ context.Context, name string) (storage.User, error) {
	return s.user(func(u storage.User) bool { return strings.EqualFold(u.Name, name) })
}

func (s *fakeStore) UserByID(_ context.Context, id string) (storage.User, error) {
	s.read("UserByID")
	return s.user(func(u storage.User) bool { return u.ID == id })
}

func (s *fakeStore) SetPasswordHash(_ context.Context, userID, hash string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.users {
		if s.users[i].ID == userID {
			s.users[i].PasswordHash = hash
			return nil
		}
	}
	return fmt.Errorf("user %q: %w", userID, storage.ErrNotFound)
}

func (s *fakeStore) Setting(_ context.Context, key string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.settings[key]
	return v, ok, nil
}

func (s *fakeStore) SetSetting(_ context.Context, key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settings[key] = value
	return nil
}

func (s *fakeStore) SettingOrInit(_ context.Context, key string, init func() (string, error)) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.settings[key]; ok {
		return v, nil
	}
	v, err := init()
	if err != nil {
		return "", err
	}
	s.settings[key] = v
	return v, nil
}

func (s *fakeStore) RevokeToken(_ context.Context, jti string, exp time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revoked[jti] = exp
	s.revision++
	s.writes++
	return nil
}

func (s *fakeStore) RevokeUserTokens(_ context.Context, userID string, at time.Time) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at = at.UTC().Truncate(time.Millisecond)
	if old := s.notBefore[userID]; old.After(at) {
		return old, nil
	}
	s.notBefore[userID] = at
	s.revision++
	s.writes++
	return at, nil
}

func (s *fakeStore) TokensNotBefore(_ context.Context, userID string) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.notBefore[userID], nil
}

func (s *fakeStore) AuthRevision(context.Context) (int64, error) {
	s.read("AuthRevision")
	s.mu.Lock()
	gate := s.revisionGate
	s.mu.Unlock()
	if gate != nil {
		<-gate
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.revision, s.failRevision
}

func (s *fakeStore) Revocations(_ context.Context, since time.Time) (storage.Revocations, error) {
	s.read("Revocations")
	s.mu.Lock()
	defer s.mu.Unlock()
	r := storage.Revocations{Revision: s.revision, Tokens: map[string]time.Time{}, NotBefore: maps.Clone(s.notBefore)}
	for jti, exp := range s.revoked {
		if !exp.Before(since) {
			r.Tokens[jti] = exp
		}
	}
	return r, nil
}

func (s *fakeStore) RevocationStamp() (storage.Stamp, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stampReads++
	if s.stampMoving {
		s.writes++
	}
	if s.stampFrozen {
		return storage.Stamp{}, true
	}
	return storage.Stamp{Size: s.writes}, true
}

// read counts a read by name.
func (s *fakeStore) read(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads[name]++
}

// readCount returns how many times the named read ran.
func (s *fakeStore) readCount(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads[name]
}

// count returns the number of records of m.
func (s *fakeStore) count(m storage.Module) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.docs[m])
}
