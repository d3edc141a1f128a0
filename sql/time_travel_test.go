package sql

import "testing"

func TestTimeTravelClauses(t *testing.T) {
	cases := []struct {
		sql     string
		version int64
		ts      string
		none    bool
	}{
		{sql: "SELECT * FROM t VERSION AS OF 3", version: 3},
		{sql: "SELECT * FROM s.t FOR VERSION AS OF 12 AS x", version: 12},
		{sql: "SELECT * FROM 'dir/t' TIMESTAMP AS OF '2026-01-01'", ts: "2026-01-01"},
		{sql: "SELECT * FROM t FOR TIMESTAMP AS OF '2026-01-01 10:00:00+00' x WHERE a > 1", ts: "2026-01-01 10:00:00+00"},
		{sql: "SELECT version AS of FROM t", none: true},
		{sql: "SELECT CAST(a AS timestamp) AS of FROM t", none: true},
	}
	for _, c := range cases {
		sts, err := Parse(c.sql)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		q := sts[0].(*Query)
		if c.none {
			if len(q.TimeTravel) != 0 {
				t.Errorf("%s: read a version clause %v", c.sql, q.TimeTravel)
			}
			continue
		}
		if len(q.TimeTravel) != 1 {
			t.Errorf("%s: %d version clauses", c.sql, len(q.TimeTravel))
			continue
		}
		for _, tt := range q.TimeTravel {
			if tt.IsVersion != (c.ts == "") || tt.Version != c.version || tt.Timestamp != c.ts {
				t.Errorf("%s: %+v", c.sql, tt)
			}
		}
	}
}
