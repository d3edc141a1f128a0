package server

import (
	"net/http"
	"strings"
	"time"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
)

// tableInfo is one registered table in GET /v1/catalog/tables.
type tableInfo struct {
	TableID     int64        `json:"table_id"`
	Table       string       `json:"table"`
	Location    string       `json:"location"`
	Format      string       `json:"format"`
	Columns     []columnInfo `json:"columns"`
	ClusteredBy []string     `json:"clustered_by"`
	Bloom       []string     `json:"bloom"`
	CreatedAt   time.Time    `json:"created_at"`
	UpdatedAt   time.Time    `json:"updated_at"`
}

type columnInfo struct {
	Name      string `json:"name"`
	Type      string `json:"type"`
	Partition bool   `json:"partition,omitempty"`
}

// tables answers GET /v1/catalog/tables from the catalog alone (no source is read).
func (s *Server) tables(w http.ResponseWriter, r *http.Request, _ lore.Principal) {
	ts, err := s.opts.Engine.Catalog().Tables(r.Context())
	if err != nil {
		writeError(w, "", err)
		return
	}
	out := make([]tableInfo, 0, len(ts))
	for _, t := range ts {
		ti := tableInfo{TableID: t.ID, Table: t.Name, Location: t.Location, Format: t.Format,
			Columns: []columnInfo{}, ClusteredBy: nonNil(t.ClusteredBy), Bloom: nonNil(t.Bloom),
			CreatedAt: t.CreatedAt.UTC(), UpdatedAt: t.UpdatedAt.UTC()}
		for _, c := range t.Columns {
			ti.Columns = append(ti.Columns, columnInfo{Name: c.Name, Type: c.Type, Partition: c.Partition})
		}
		out = append(out, ti)
	}
	writeJSON(w, http.StatusOK, map[string]any{"tables": out})
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// tableVersion answers GET /v1/catalog/tables/{name}/version: the current source
// version, its identity digest as the ETag; If-None-Match with it is 304.
func (s *Server) tableVersion(w http.ResponseWriter, r *http.Request, _ lore.Principal) {
	v, err := s.opts.Engine.CurrentVersion(r.Context(), r.PathValue("name"))
	if err != nil {
		writeError(w, "", err)
		return
	}
	if notModified(w, r, v.SourceVersion.IdentitySHA256) {
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// tableStatistics answers GET /v1/catalog/tables/{name}/statistics: the record and
// whether it is stale. The ETag names both the record's version and the current one,
// so it changes when either does.
func (s *Server) tableStatistics(w http.ResponseWriter, r *http.Request, _ lore.Principal) {
	st, err := s.opts.Engine.Statistics(r.Context(), r.PathValue("name"))
	if errs.CodeOf(err) == errs.StatisticsUnavailable {
		// SPEC §9: here the record is the resource asked for, so its absence is 404
		// (in a statement, STATISTICS_UNAVAILABLE is the statement's fault: 400).
		writeJSON(w, http.StatusNotFound, map[string]any{"error": bodyOf(err)})
		return
	}
	if err != nil {
		writeError(w, "", err)
		return
	}
	tag := st.SourceVersion.IdentitySHA256 + "." + st.CurrentSourceVersion.IdentitySHA256
	if notModified(w, r, tag) {
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// notModified sets the ETag of digest and answers 304 when If-None-Match holds it.
func notModified(w http.ResponseWriter, r *http.Request, digest string) bool {
	etag := `"` + digest + `"`
	w.Header().Set("ETag", etag)
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatches(inm, etag) {
		w.WriteHeader(http.StatusNotModified)
		return true
	}
	return false
}

func etagMatches(header, etag string) bool {
	for _, part := range splitComma(header) {
		if part == "*" || part == etag || part == "W/"+etag {
			return true
		}
	}
	return false
}

func splitComma(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
