package hostile

import (
	"fmt"
	"net"
	"net/http"
	"slices"
	"testing"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// The start/remove race (issue 13, item 4).
const (
	// racePairs is how many players are started and removed at the same time.
	racePairs = 40
	// raceRounds is how many times the race is run, each on new players: enough for the probe
	// to see the server through it.
	raceRounds = 5
	// processBytes is what one running process may cost the server besides its media budgets:
	// its supervisor and goroutines, the pipes to its ffmpeg child, and a few seconds of a
	// 100 kbit/s test stream in its stream, queue and segments.
	processBytes = 1 << 20
)

// testStartRemoveRace: 40 players fed by the test stream (an ffmpeg child each) are started
// and removed at the same time, each by its own pair of requests, in raceRounds rounds. Before
// issue 13, 2 of 40 pairs left an ffmpeg child and a bound player port with no record and no
// claim, and the port answered 409 PORT_TAKEN until a restart. Now, once every pair of a round
// is answered, the server has no child, holds none of the ports, and claims nothing but its API
// port.
func testStartRemoveRace(t *testing.T) {
	s := start(t, options{})
	b := budget(racePairs*processBytes, fmt.Sprintf("%d processes × %d MiB", racePairs, processBytes>>20))
	w := s.watch()
	won := 0
	for round := range raceRounds {
		won += s.raceRound(t, round)
		if t.Failed() {
			break
		}
	}
	f := w.stop()
	t.Logf("%d of %d starts came before their remove", won, raceRounds*racePairs)
	f.check(t, s, b)

	s.rtmpPlayer("after-race").prove(t)
}

// raceRound creates racePairs inactive players, starts and removes each at the same time, and
// checks that nothing of them is left. It returns how many starts came first.
func (s *server) raceRound(t *testing.T, round int) int {
	t.Helper()
	ids := make([]string, racePairs)
	ports := make([]int, racePairs)
	for i := range racePairs {
		ids[i], ports[i] = s.createOnPort("vod", func(p int) map[string]any {
			body := playerBody(fmt.Sprintf("race-%d-%d", round, i), p, tinyTestVideo())
			body["active"] = false
			return body
		})
	}
	won := testutil.StartRemoveAtOnce(t, fmt.Sprintf("round %d, ", round), "vod", ids, s.status)
	// Removal answers once the process's children are reaped and its ports closed: nothing
	// may be left now, without waiting.
	if kids := s.children(); len(kids) > 0 {
		t.Errorf("round %d: %d child processes left after every player was removed: %v", round, len(kids), kids)
	}
	var listening []struct {
		Port      int    `json:"port"`
		Transport string `json:"transport"`
	}
	s.call("/api/utils/getListeningPorts", nil, http.StatusOK, &listening)
	for _, l := range listening {
		if slices.Contains(ports, l.Port) {
			t.Errorf("round %d: the server still listens on a removed player's port %d/%s", round, l.Port, l.Transport)
		}
	}
	var claims []map[string]any
	s.call("/api/ports/getAll", nil, http.StatusOK, &claims)
	for _, c := range claims {
		if c["module_name"] != "MODULE_API" {
			t.Errorf("round %d: a claim left after every player was removed: %v", round, c)
		}
	}
	var left []map[string]any
	s.call("/api/vod/getAll", nil, http.StatusOK, &left)
	if len(left) > 0 {
		t.Errorf("round %d: %d players left after every one was removed", round, len(left))
	}
	// The process itself holds none of the ports, whatever its API says; each can be bound
	// again at once (only another program may take one meanwhile).
	held, _, err := listeningPorts(s.pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ports {
		if held[p] {
			t.Errorf("round %d: the server process still listens on a removed player's port %d", round, p)
			continue
		}
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err == nil {
			l.Close()
		} else {
			t.Logf("round %d: port %d taken by another program meanwhile: %v", round, p, err)
		}
	}
	return won
}

// status sends one API call and returns its status (0 when it failed).
func (s *server) status(path string, body any) int {
	st, _, err := s.post(path, body)
	if err != nil {
		s.t.Errorf("%s: %v", path, err)
	}
	return st
}
