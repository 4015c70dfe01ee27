package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sluicemedia/sluice/storage"
)

func TestUsers(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	u := storage.User{ID: storage.NewID(), Name: "admin", PasswordHash: "h1", Created: at(0)}
	if err := s.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	dup := storage.User{ID: storage.NewID(), Name: "Admin", PasswordHash: "h2"}
	if err := s.CreateUser(ctx, dup); !errors.Is(err, storage.ErrNameTaken) {
		t.Errorf("duplicate user: %v, want ErrNameTaken", err)
	}
	byName, err := s.UserByName(ctx, "ADMIN")
	if err != nil {
		t.Fatal(err)
	}
	if byName.ID != u.ID || byName.Name != "admin" || byName.PasswordHash != "h1" || !byName.Created.Equal(u.Created) {
		t.Errorf("UserByName = %+v", byName)
	}
	if err := s.SetPasswordHash(ctx, u.ID, "h3"); err != nil {
		t.Fatal(err)
	}
	if byID, err := s.UserByID(ctx, u.ID); err != nil || byID.PasswordHash != "h3" {
		t.Errorf("UserByID = %+v, %v", byID, err)
	}
	for _, err := range []error{
		func() error { _, err := s.UserByName(ctx, "nobody"); return err }(),
		func() error { _, err := s.UserByID(ctx, storage.NewID()); return err }(),
		s.SetPasswordHash(ctx, storage.NewID(), "x"),
	} {
		if !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("unknown user: %v, want ErrNotFound", err)
		}
	}
}
