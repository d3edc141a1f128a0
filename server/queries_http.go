package server

import (
	"net/http"
	"strings"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
)

// getQuery answers GET /v1/queries/{id}: the live state, and the record once the
// statement ended. A statement the server no longer holds is read from the query log.
// A reader sees its own statements only; another's is NOT_FOUND, as if absent.
func (s *Server) getQuery(w http.ResponseWriter, r *http.Request, p lore.Principal) {
	id := r.PathValue("id")
	if info, ok := s.queries.get(id); ok && visible(info, p) {
		writeJSON(w, http.StatusOK, info)
		return
	}
	rec, err := s.opts.Engine.LoggedRecord(r.Context(), id)
	if err != nil {
		writeError(w, id, err)
		return
	}
	if rec == nil || (p.Role != lore.RoleAdmin && rec.Subject != p.Name) {
		writeError(w, id, errs.New(errs.NotFound, "no query %q", id))
		return
	}
	state := strings.ToUpper(rec.State)
	if rec.Error != nil && rec.Error.Code == string(errs.Canceled) {
		state = StateCanceled
	}
	writeJSON(w, http.StatusOK, queryInfo{QueryID: id, State: state, Subject: rec.Subject, SQL: rec.SQL,
		ElapsedMS: rec.ElapsedMS, Record: rec})
}

// listQueries answers GET /v1/queries[?state=queued|running|finished|failed|canceled]:
// the statements the server holds, newest first; a reader's own only.
func (s *Server) listQueries(w http.ResponseWriter, r *http.Request, p lore.Principal) {
	state := strings.ToUpper(r.URL.Query().Get("state"))
	switch state {
	case "", StateQueued, StateRunning, StateFinished, StateFailed, StateCanceled:
	default:
		writeError(w, "", errs.New(errs.InvalidRequest, "unknown state %q (want queued, running, finished, failed or canceled)", r.URL.Query().Get("state")))
		return
	}
	var owner *lore.Principal
	if p.Role != lore.RoleAdmin {
		owner = &p
	}
	writeJSON(w, http.StatusOK, map[string]any{"queries": s.queries.list(state, owner)})
}

// cancelQuery answers DELETE /v1/queries/{id}: the statement's owner or an admin
// cancels it (its own response is then 499 CANCELED). 202 when it was running, 200
// with its state when it had ended, 404 when the server does not know it.
func (s *Server) cancelQuery(w http.ResponseWriter, r *http.Request, p lore.Principal) {
	id := r.PathValue("id")
	info, ok := s.queries.get(id)
	if !ok || (!visible(info, p)) {
		writeError(w, id, errs.New(errs.NotFound, "no query %q", id))
		return
	}
	if (info.State != StateRunning && info.State != StateQueued) || !s.queries.cancel(id) {
		// Canceling what has ended changes nothing: say how it ended.
		writeJSON(w, http.StatusOK, map[string]string{"query_id": id, "state": info.State})
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"query_id": id, "state": "CANCELING"})
}

// visible reports whether principal p may see statement q: its owner and admins.
func visible(q queryInfo, p lore.Principal) bool {
	return p.Role == lore.RoleAdmin || q.owner.Name == p.Name
}
