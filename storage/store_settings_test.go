package storage_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

func TestSettings(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	if _, ok, err := s.Setting(ctx, "k"); ok || err != nil {
		t.Errorf("missing setting: ok=%v err=%v", ok, err)
	}
	for _, v := range []string{"one", "two"} {
		if err := s.SetSetting(ctx, "k", v); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := s.Setting(ctx, "k"); got != v || !ok || err != nil {
			t.Errorf("Setting = %q, %v, %v; want %q", got, ok, err, v)
		}
	}
	got, err := s.SettingOrInit(ctx, "k", func() (string, error) { return "never", nil })
	if err != nil || got != "two" {
		t.Errorf("SettingOrInit on a set key = %q, %v", got, err)
	}
	boom := errors.New("boom")
	if _, err := s.SettingOrInit(ctx, "new", func() (string, error) { return "", boom }); !errors.Is(err, boom) {
		t.Errorf("failing init: %v", err)
	}
	if _, ok, _ := s.Setting(ctx, "new"); ok {
		t.Error("failing init stored a value")
	}
}

func TestSettingOrInitConcurrent(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	var calls atomic.Int32
	const n = 20
	values := make([]string, n)
	ok, _ := createAtOnce(t, n, nil, func(i int) (err error) {
		values[i], err = s.SettingOrInit(ctx, "jwt_secret", func() (string, error) {
			return fmt.Sprintf("secret-%d", calls.Add(1)), nil
		})
		return err
	})
	if ok != n {
		t.Errorf("%d of %d callers succeeded", ok, n)
	}
	for i := range n {
		if values[i] != values[0] {
			t.Errorf("caller %d: %q; caller 0 got %q", i, values[i], values[0])
		}
	}
	if c := calls.Load(); c != 1 {
		t.Errorf("init ran %d times, want 1", c)
	}
}
