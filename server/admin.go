package server

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/source"
)

// adminOnly runs h for an admin token and answers 403 FORBIDDEN to any other.
func adminOnly(h authed) authed {
	return func(w http.ResponseWriter, r *http.Request, p lore.Principal) {
		if p.Role != lore.RoleAdmin {
			writeError(w, "", errs.New(errs.Forbidden, "%s %s needs an admin token", r.Method, r.URL.Path))
			return
		}
		h(w, r, p)
	}
}

// clearCache answers DELETE /v1/cache (admin): the engine's result cache is emptied,
// so that the next statements are computed again. What it dropped is the answer.
func (s *Server) clearCache(w http.ResponseWriter, r *http.Request, _ lore.Principal) {
	n, b := s.opts.Engine.ClearResultCache()
	writeJSON(w, http.StatusOK, map[string]any{"results_dropped": n, "bytes_dropped": b})
}

// statisticsSummary is one table of GET /v1/statistics.
type statisticsSummary struct {
	TableID              int64           `json:"table_id"`
	Table                string          `json:"table"`
	SourceVersion        *source.Version `json:"source_version,omitempty"`
	CurrentSourceVersion *source.Version `json:"current_source_version,omitempty"`
	Stale                *bool           `json:"stale,omitempty"`
	ComputedAtMS         int64           `json:"computed_at_ms,omitempty"`
	Depth                string          `json:"depth,omitempty"`
	Rows                 *int64          `json:"rows,omitempty"`
	Files                int             `json:"files,omitempty"`
	Zones                *int            `json:"zones,omitempty"`
	Error                *errorBody      `json:"error,omitempty"`
}

// recordSummary is what a summary reads of a statistics record.
type recordSummary struct {
	ComputedAtMS int64             `json:"computed_at_ms"`
	Depth        string            `json:"depth"`
	Rows         int64             `json:"rows"`
	Files        int               `json:"files"`
	Zones        []json.RawMessage `json:"zones"`
}

// allStatistics answers GET /v1/statistics (admin): every registered table's
// statistics summary, in the catalog's order. A table without a record, or whose
// source cannot be read, carries its error; the listing itself does not fail.
func (s *Server) allStatistics(w http.ResponseWriter, r *http.Request, _ lore.Principal) {
	ts, err := s.opts.Engine.Catalog().Tables(r.Context())
	if err != nil {
		writeError(w, "", err)
		return
	}
	out := make([]statisticsSummary, 0, len(ts))
	for _, t := range ts {
		if r.Context().Err() != nil {
			writeError(w, "", errs.New(errs.Canceled, "the request was canceled"))
			return
		}
		out = append(out, s.summarize(r.Context(), t.ID, t.Name))
	}
	writeJSON(w, http.StatusOK, map[string]any{"tables": out})
}

func (s *Server) summarize(ctx context.Context, id int64, name string) statisticsSummary {
	sum := statisticsSummary{TableID: id, Table: name}
	st, err := s.opts.Engine.Statistics(ctx, name)
	if err != nil {
		sum.Error = bodyOf(err)
		return sum
	}
	var rec recordSummary
	if err := json.Unmarshal(st.Statistics, &rec); err != nil {
		sum.Error = bodyOf(errs.New(errs.Internal, "the statistics record of %s does not read: %v", name, err))
		return sum
	}
	zones := len(rec.Zones)
	sum.SourceVersion, sum.CurrentSourceVersion, sum.Stale = &st.SourceVersion, &st.CurrentSourceVersion, &st.Stale
	sum.ComputedAtMS, sum.Depth, sum.Rows, sum.Files, sum.Zones = rec.ComputedAtMS, rec.Depth, &rec.Rows, rec.Files, &zones
	return sum
}
