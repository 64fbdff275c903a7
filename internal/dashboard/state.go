package dashboard

import (
	"net/http"
	"strings"

	"github.com/perfbot/perfbot/internal/store"
)

// stateChange is the body of POST /api/findings/{culprit}/state.
type stateChange struct {
	State  string `json:"state"`  // untriaged, acknowledged or dismissed
	Reason string `json:"reason"` // required to dismiss
}

// setStateAPI sets a finding's state, as perfbot findings ack|dismiss|
// reopen does, and answers with the finding.
func (s *Server) setStateAPI(r *http.Request) (int, any, error) {
	var sc stateChange
	if err := decode(r, &sc); err != nil {
		return 0, nil, err
	}
	state := store.FindingState(sc.State)
	switch state {
	case store.Untriaged, store.Acknowledged:
	case store.Dismissed:
		if strings.TrimSpace(sc.Reason) == "" {
			return 0, nil, errorf(http.StatusBadRequest, "dismissing a finding needs a reason (field reason)")
		}
	default:
		return 0, nil, errorf(http.StatusBadRequest, "field state %q: want untriaged, acknowledged or dismissed", sc.State)
	}
	src, rec, err := s.lookup(r.Context(), r.PathValue("culprit"))
	if err != nil {
		return 0, nil, err
	}
	st, err := src.open()
	if err != nil {
		return 0, nil, err
	}
	if err := st.SetFindingState(r.Context(), rec.Culprit, state, strings.TrimSpace(sc.Reason)); err != nil {
		return 0, nil, err
	}
	s.logf("finding %s is %s (from the dashboard, %s)", rec.Culprit[:12], state, r.RemoteAddr)
	v, err := s.finding(r.Context(), rec.Culprit)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, v.FindingSummary, nil
}
