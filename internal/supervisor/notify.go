package supervisor

import "time"

// changeLocked applies f to the status, stamps Since when the state moved, and queues the
// result for the log and OnChange if anything changed. s.mu must be held; call deliver after
// unlocking.
func (s *Supervisor) changeLocked(f func(*Status)) {
	old := s.status
	f(&s.status)
	if s.status.State == old.State && s.status.LastError == old.LastError &&
		s.status.Restarts == old.Restarts {
		return
	}
	if s.status.State != old.State {
		s.status.Since = time.Now()
	}
	s.pending = append(s.pending, s.status)
}

// deliver logs the queued changes and gives them to OnChange in order, with no lock held. If
// another goroutine is already delivering, that one delivers them, so the order holds and
// OnChange is never re-entered.
func (s *Supervisor) deliver() {
	s.mu.Lock()
	if s.delivering {
		s.mu.Unlock()
		return
	}
	s.delivering = true
	for len(s.pending) > 0 {
		st := s.pending[0]
		s.pending = s.pending[1:]
		s.mu.Unlock()
		s.opts.Logger.Debug("state", "state", st.State, "restarts", st.Restarts)
		if s.opts.OnChange != nil {
			s.opts.OnChange(st)
		}
		s.mu.Lock()
	}
	s.pending = nil
	s.delivering = false
	s.mu.Unlock()
}
