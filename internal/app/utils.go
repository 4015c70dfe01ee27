package app

import (
	"context"
	"errors"
	"sort"

	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/internal/procfs"
	"github.com/sluicemedia/sluice/internal/sysstats"
	"github.com/sluicemedia/sluice/storage"
)

// Utilities serves the system utilities of spec 4.4.
type Utilities struct {
	DataDir string
	Speed   *sysstats.SpeedTester
	APIPort int
	Manager *Manager
	Store   *storage.Store
}

var _ api.Utils = (*Utilities)(nil)

// ServerStat implements api.Utils.
func (u *Utilities) ServerStat(ctx context.Context) (any, error) {
	st, err := sysstats.Read(ctx, u.DataDir)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// SpeedTest implements api.Utils.
func (u *Utilities) SpeedTest(ctx context.Context) (any, error) {
	res, err := u.Speed.Run(ctx)
	if errors.Is(err, sysstats.ErrNotAvailable) {
		err = unavailable{err}
	}
	return res, err
}

// unavailable is an error of a package that does not know the API marked as
// api.ErrNotAvailable (503), its message unchanged.
type unavailable struct{ error }

func (u unavailable) Is(target error) bool { return target == api.ErrNotAvailable }
func (u unavailable) Unwrap() error        { return u.error }

// ListeningPorts implements api.Utils: the service's own listeners (the API port and the ports
// claimed by running entities) that the kernel's socket tables show this process holding now.
func (u *Utilities) ListeningPorts(ctx context.Context) ([]storage.PortKey, error) {
	tcp, udp, err := procfs.Listeners(0)
	if err != nil {
		return nil, err
	}
	open := func(k storage.PortKey) bool {
		if k.Transport == storage.UDP {
			return udp[k.Port]
		}
		return k.Transport == storage.TCP && tcp[k.Port]
	}
	var out []storage.PortKey
	if k := (storage.PortKey{Port: u.APIPort, Transport: storage.TCP}); open(k) {
		out = append(out, k)
	}
	running := map[string]bool{}
	for _, k := range u.Manager.Running() {
		running[k.id] = true
	}
	claims, err := u.Store.PortClaims(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range claims {
		if running[c.EntityID] && open(c.Key()) {
			out = append(out, c.Key())
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Port != out[j].Port {
			return out[i].Port < out[j].Port
		}
		return out[i].Transport < out[j].Transport
	})
	return out, nil
}
