package sql

import (
	"strings"

	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
	"github.com/loredb/lore/sql/pgtree"
)

// SemiJoinMark and AntiJoinMark are the Rtindex of a JoinExpr written SEMI JOIN or
// ANTI JOIN (DuckDB's forms, which PostgreSQL's grammar does not have). The raw parse
// tree never sets Rtindex (PostgreSQL's analysis does), so the mark cannot clash; the
// join otherwise reads as the inner join it was parsed as.
const (
	SemiJoinMark int32 = -1
	AntiJoinMark int32 = -2
)

// duckJoinWords are DuckDB's join kinds that PostgreSQL's grammar does not know. It
// reads `a SEMI JOIN b` as a join of a (aliased "semi") with b, which would answer a
// different question: SEMI and ANTI directly before JOIN are read here, and the rest
// are refused.
var duckJoinWords = map[string]bool{"semi": true, "anti": true, "asof": true, "positional": true}

// joinTypeWords may stand between one of duckJoinWords and JOIN (ASOF LEFT JOIN), as
// may NATURAL, which DuckDB writes before SEMI and ANTI only.
var joinTypeWords = map[pg.Token]bool{pg.Token_LEFT: true, pg.Token_RIGHT: true, pg.Token_FULL: true,
	pg.Token_INNER_P: true, pg.Token_OUTER_P: true, pg.Token_CROSS: true}

// rewriteJoinKinds blanks SEMI or ANTI written directly before JOIN with spaces in
// src (so every offset stays put) and returns the offsets of those JOIN keywords with
// the mark of their kind. It refuses ASOF and POSITIONAL joins, and SEMI or ANTI
// beside another join type (LEFT SEMI JOIN, SEMI NATURAL JOIN), which DuckDB does not
// have either. A quoted identifier is an alias; DuckDB refuses the bare words as
// aliases before JOIN.
func rewriteJoinKinds(text string, toks []token, src []byte, base int) (map[int]int32, error) {
	var marks map[int]int32
	for i, t := range toks {
		if isQuotedIdent(text, t) || !isWordToken(t) {
			continue
		}
		w := strings.ToLower(text[t.start:t.end])
		if !duckJoinWords[w] {
			continue
		}
		k := i + 1
		for k < len(toks) && (joinTypeWords[toks[k].kind] || toks[k].kind == pg.Token_NATURAL) {
			k++
		}
		if k >= len(toks) || toks[k].kind != pg.Token_JOIN {
			continue
		}
		semiAnti := w == "semi" || w == "anti"
		if !semiAnti || k != i+1 || (i > 0 && joinTypeWords[toks[i-1].kind]) {
			return nil, errs.At(errs.Analysis, t.start, "%s JOIN is not supported",
				strings.ToUpper(strings.Join(strings.Fields(text[t.start:toks[k].start]), " ")))
		}
		for j := t.start; j < t.end; j++ {
			src[j-base] = ' '
		}
		if marks == nil {
			marks = map[int]int32{}
		}
		marks[toks[k].start] = SemiJoinMark
		if w == "anti" {
			marks[toks[k].start] = AntiJoinMark
		}
	}
	return marks, nil
}

// markJoinKinds sets the mark of each JOIN keyword of marks (an offset) on its
// JoinExpr. A JoinExpr has no location, but its right input starts right after its
// JOIN keyword: the keyword's join is the one whose right input's first located node
// comes first after the keyword (only parentheses and words without a node, such as
// LATERAL, can stand between them).
func markJoinKinds(root any, marks map[int]int32) error {
	type joinAt struct {
		j     *pg.JoinExpr
		start int
	}
	var joins []joinAt
	walk(root, func(m any) {
		if j, ok := m.(*pg.JoinExpr); ok && j.Rarg != nil {
			joins = append(joins, joinAt{j, firstLocation(j.Rarg)})
		}
	})
	for at, mark := range marks {
		var best *pg.JoinExpr
		bestStart := -1
		for _, j := range joins {
			if j.start > at && (best == nil || j.start < bestStart) {
				best, bestStart = j.j, j.start
			}
		}
		if best == nil {
			return errs.At(errs.Analysis, at, "SEMI or ANTI JOIN is not supported here")
		}
		best.Rtindex = mark
	}
	return nil
}

// firstLocation is the smallest known location in the tree below m, -1 if none.
func firstLocation(m any) int {
	first := -1
	pgtree.Walk(m, func(m any) bool {
		pgtree.Locations(m, func(_ bool, p *int32) {
			if v := int(*p); v >= 0 && (first < 0 || v < first) {
				first = v
			}
		})
		return true
	})
	return first
}
