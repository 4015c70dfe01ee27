package api

import (
	"net/http"

	"github.com/sluicemedia/sluice/storage"
)

// activeStreams lists the streams published to a server module now.
func (s *server) activeStreams(m *module) http.HandlerFunc {
	return s.answerRecord(m, func(r *http.Request, id string, _ storage.Record) (any, error) {
		streams, err := s.procs.ActiveStreams(r.Context(), m.kind, id)
		if err != nil {
			return nil, m.notFound(id, err)
		}
		out := make([]map[string]any, 0, len(streams))
		for _, st := range streams {
			e := map[string]any{"stream_id": st.StreamID, "publisher": st.Publisher, "since": FormatTime(st.Since),
				"bitrate": st.Bitrate, "readers": st.Readers}
			if st.RTTMs != nil {
				e["rtt_ms"] = *st.RTTMs
			}
			if st.PacketsLost != nil {
				e["packets_lost"] = *st.PacketsLost
			}
			if st.Retransmitted != nil {
				e["retransmitted"] = *st.Retransmitted
			}
			if st.SRT != nil {
				e["srt"] = st.SRT.doc()
			}
			out = append(out, e)
		}
		return out, nil
	})
}
