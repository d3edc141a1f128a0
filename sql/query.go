package sql

import (
	"strings"

	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
	"github.com/loredb/lore/sql/pgtree"
)

// parsePostgres reads a statement with PostgreSQL's grammar. A query (possibly under
// EXPLAIN) becomes a Query; any other statement is refused by name.
func parsePostgres(text string, toks []token) (Statement, error) {
	start, end := toks[0].start, toks[len(toks)-1].end
	src := []byte(text[start:end])
	paths, err := rewritePaths(text, toks, src, start)
	if err != nil {
		return nil, err
	}
	timeTravel, err := rewriteTimeTravel(text, toks, src, start)
	if err != nil {
		return nil, err
	}
	joinKinds, err := rewriteJoinKinds(text, toks, src, start)
	if err != nil {
		return nil, err
	}
	dialect, err := rewriteDialect(text, toks, src, start)
	if err != nil {
		return nil, err
	}
	intDiv := rewriteIntDiv(text, toks, src, start)
	tryCasts := rewriteTryCasts(text, toks, src, start)
	ignoreNulls := rewriteNullTreatment(text, toks, src, start)
	intervalUnits := rewriteIntervalUnits(text, toks, src, start)
	nestedTypes, plain := rewriteNestedTypes(text, toks, src, start)
	dialect, edits, err := rewriteNested(text, plain, src, start, dialect)
	if err != nil {
		return nil, err
	}
	edits = append(edits, rewriteIntervalExprs(text, toks, start)...)
	lambdas := rewriteLambdas(text, toks, src, start)
	comprehensions, edits, err := rewriteComprehensions(text, toks, src, start, edits)
	if err != nil {
		return nil, err
	}
	node, err := parseRewritten(text, toks, src, start, edits)
	if err != nil {
		return nil, err
	}
	markComprehensions(node, comprehensions)
	if err := markLambdas(node, lambdas); err != nil {
		return nil, err
	}
	if intDiv != nil {
		markIntDiv(node, intDiv)
	}
	markFloat4(node, text)
	if nestedTypes != nil {
		markNestedTypes(node, nestedTypes)
	}
	if intervalUnits != nil {
		markIntervalUnits(node, intervalUnits)
	}
	if joinKinds != nil {
		if err := markJoinKinds(node, joinKinds); err != nil {
			return nil, err
		}
	}
	q := &Query{Start: start, End: end, Text: text[start:end], Dialect: dialect, TryCasts: tryCasts, TimeTravel: timeTravel,
		NoColumnsCall: !callsWord(text, toks, "columns")}
	inner := toks
	if ex := node.GetExplainStmt(); ex != nil {
		q.Explain = true
		if q.Analyze, err = explainOptions(ex); err != nil {
			return nil, err
		}
		node, inner = ex.Query, skipExplain(text, toks)
	}
	q.Select = node.GetSelectStmt()
	if q.Select == nil {
		name := describeNode(node)
		if name == "" {
			name = describeTokens(text, inner)
		}
		if q.Explain {
			name = "EXPLAIN " + name
		}
		return nil, errs.At(errs.Analysis, start, "unsupported statement: %s", name)
	}
	if q.Select.IntoClause != nil {
		return nil, errs.At(errs.Analysis, start, "unsupported statement: SELECT INTO")
	}
	q.IgnoreNulls = ignoreNulls
	if len(paths) > 0 {
		q.Paths = make(map[int]bool, len(paths))
		for pos := range paths {
			q.Paths[pos] = true
		}
		// PostgreSQL truncates identifiers to 63 bytes; a path is not an identifier,
		// so its RangeVar gets the literal's full value back.
		walk(q.Select, func(m any) {
			if rv, ok := m.(*pg.RangeVar); ok {
				if p, ok := paths[int(rv.Location)]; ok && rv.Schemaname == "" && rv.Catalogname == "" {
					rv.Relname = p
				}
			}
		})
	}
	return q, nil
}

// describeNode names the data-changing statements, which may start with WITH and
// so are not named well by their first word.
func describeNode(n *pg.Node) string {
	switch {
	case n.GetInsertStmt() != nil:
		return "INSERT"
	case n.GetUpdateStmt() != nil:
		return "UPDATE"
	case n.GetDeleteStmt() != nil:
		return "DELETE"
	case n.GetMergeStmt() != nil:
		return "MERGE"
	}
	return ""
}

// skipExplain returns the tokens of the statement under EXPLAIN: after the EXPLAIN
// keyword, a parenthesized option list or the ANALYZE/VERBOSE words.
func skipExplain(text string, toks []token) []token {
	i := 1
	if i < len(toks) && toks[i].kind == tokLParen {
		for depth := 0; i < len(toks); i++ {
			if toks[i].kind == tokLParen {
				depth++
			} else if toks[i].kind == tokRParen {
				if depth--; depth == 0 {
					i++
					break
				}
			}
		}
	} else {
		for i < len(toks) && (is(text, toks[i], "analyze") || is(text, toks[i], "analyse") || is(text, toks[i], "verbose")) {
			i++
		}
	}
	if i >= len(toks) {
		return toks
	}
	return toks[i:]
}

// explainOptions reads EXPLAIN's options: ANALYZE (optionally with a boolean) and
// VERBOSE (accepted, no effect). Other PostgreSQL options would be silently
// meaningless here, so they are refused.
func explainOptions(ex *pg.ExplainStmt) (analyze bool, err error) {
	for _, o := range ex.Options {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		switch d.Defname {
		case "analyze", "verbose":
			on, ok := defElemBool(d)
			if !ok {
				return false, errs.At(errs.Syntax, int(d.Location), "EXPLAIN option %s takes a boolean", strings.ToUpper(d.Defname))
			}
			if d.Defname == "analyze" {
				analyze = on
			}
		default:
			return false, errs.At(errs.Analysis, int(d.Location), "EXPLAIN option %s is not supported", strings.ToUpper(d.Defname))
		}
	}
	return analyze, nil
}

// defElemBool reads an option's boolean argument as PostgreSQL does: no argument
// is true; true/false/on/off/1/0 otherwise.
func defElemBool(d *pg.DefElem) (bool, bool) {
	if d.Arg == nil {
		return true, true
	}
	if b := d.Arg.GetBoolean(); b != nil {
		return b.Boolval, true
	}
	if i := d.Arg.GetInteger(); i != nil && (i.Ival == 0 || i.Ival == 1) {
		return i.Ival == 1, true
	}
	if s := d.Arg.GetString_(); s != nil {
		switch strings.ToLower(s.Sval) {
		case "true", "on", "yes":
			return true, true
		case "false", "off", "no":
			return false, true
		}
	}
	return false, false
}

// rewritePaths turns each plain string literal in a table position (directly after
// FROM or JOIN, or after a comma or an opening parenthesis within a FROM list) into
// a double-quoted identifier of the same byte length in src (the statement's text,
// which starts at byte offset base of text), so PostgreSQL's grammar
// reads `FROM 'data/*.parquet'` as a table reference while every offset stays put.
// It returns the literals' values by byte offset.
//
// FROM only opens a FROM list at a bracket level that has seen SELECT, so the FROM of
// extract(year FROM '…') or substring('…' FROM 2) leaves its literal alone.
func rewritePaths(text string, toks []token, src []byte, base int) (map[int]string, error) {
	type level struct{ selectSeen, fromList bool }
	stack := []level{{}}
	var paths map[int]string
	first := 0 // the first token under EXPLAIN
	if toks[0].kind == pg.Token_EXPLAIN {
		first = len(toks) - len(skipExplain(text, toks))
	}
	for i, t := range toks {
		top := &stack[len(stack)-1]
		var prev token
		if i > 0 {
			prev = toks[i-1]
		}
		switch {
		case t.kind == tokLParen:
			inFrom := top.fromList && i > 0 && (prev.kind == pg.Token_FROM || prev.kind == pg.Token_JOIN ||
				prev.kind == tokComma || prev.kind == tokLParen)
			stack = append(stack, level{fromList: inFrom})
		case t.kind == tokRParen:
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
		case t.kind == pg.Token_SELECT:
			top.selectSeen, top.fromList = true, false
		case t.kind == pg.Token_FROM:
			if top.selectSeen || i == first { // DuckDB's FROM-first query
				top.fromList = true
			}
		case endsFromList(t.kind):
			top.fromList = false
		case t.kind == pg.Token_SCONST && i > 0 && text[t.start] == '\'':
			tablePos := prev.kind == pg.Token_JOIN ||
				(top.fromList && (prev.kind == pg.Token_FROM || prev.kind == tokComma || prev.kind == tokLParen))
			if !tablePos {
				continue
			}
			// 'x'.y or 'x'(…) would turn into a qualified name or a function call;
			// leave those to the grammar's own error.
			if i+1 < len(toks) && (toks[i+1].kind == tokDot || toks[i+1].kind == tokLParen) {
				continue
			}
			if t.end-t.start < 2 || text[t.end-1] != '\'' {
				continue
			}
			content := text[t.start+1 : t.end-1]
			switch {
			case content == "":
				return nil, errs.At(errs.Syntax, t.start, "syntax error at or near \"''\": empty path")
			case strings.ContainsRune(content, '\''):
				// '' (or a literal continued on the next line) cannot keep its length
				// as an identifier.
				return nil, errs.At(errs.Syntax, t.start+1+strings.IndexByte(content, '\''),
					"syntax error at or near \"%s\": a path in FROM may not contain a single quote", text[t.start:t.end])
			case strings.ContainsRune(content, '"'):
				return nil, errs.At(errs.Syntax, t.start+1+strings.IndexByte(content, '"'),
					"syntax error at or near \"%s\": a path in FROM may not contain a double quote", text[t.start:t.end])
			}
			src[t.start-base], src[t.end-1-base] = '"', '"'
			if paths == nil {
				paths = map[int]string{}
			}
			paths[t.start] = content
		}
	}
	return paths, nil
}

// endsFromList reports whether a keyword ends a FROM list at its level.
func endsFromList(k pg.Token) bool {
	switch k {
	case pg.Token_WHERE, pg.Token_GROUP_P, pg.Token_HAVING, pg.Token_WINDOW, pg.Token_ORDER,
		pg.Token_LIMIT, pg.Token_OFFSET, pg.Token_FETCH, pg.Token_UNION, pg.Token_INTERSECT,
		pg.Token_EXCEPT, pg.Token_FOR, pg.Token_INTO, pg.Token_RETURNING, pg.Token_VALUES:
		return true
	}
	return false
}

// parsePredicate parses the predicate of OPTIMIZE … WHERE (toks[where] is the WHERE
// keyword) as PostgreSQL's "SELECT WHERE predicate"; the tree's Locations are
// offsets into text.
func parsePredicate(text string, toks []token, where int) (*pg.Node, error) {
	pred := toks[where+1:]
	depth := 0
	for _, t := range pred {
		switch {
		case t.kind == tokLParen:
			depth++
		case t.kind == tokRParen:
			depth--
		case depth == 0 && (endsFromList(t.kind) || t.kind == pg.Token_FROM):
			return nil, errs.At(errs.Syntax, t.start, "syntax error at or near \"%s\": OPTIMIZE … WHERE takes a predicate only", text[t.start:t.end])
		}
	}
	const prefix = "SELECT WHERE "
	start, end := pred[0].start, pred[len(pred)-1].end
	node, err := parseTree(prefix+text[start:end], start-len(prefix), pred, text)
	if err != nil {
		return nil, err
	}
	sel := node.GetSelectStmt()
	if sel == nil || sel.WhereClause == nil || len(sel.TargetList) > 0 || len(sel.FromClause) > 0 ||
		len(sel.GroupClause) > 0 || sel.HavingClause != nil || len(sel.WindowClause) > 0 ||
		len(sel.SortClause) > 0 || sel.LimitCount != nil || sel.LimitOffset != nil ||
		len(sel.LockingClause) > 0 || sel.WithClause != nil || sel.IntoClause != nil ||
		len(sel.ValuesLists) > 0 || len(sel.DistinctClause) > 0 || sel.Op != pg.SetOperation_SETOP_NONE {
		return nil, errs.At(errs.Syntax, pred[0].start, "syntax error: OPTIMIZE … WHERE takes a predicate only")
	}
	return sel.WhereClause, nil
}

// walk calls fn on m and on every message below it.
func walk(m any, fn func(any)) {
	pgtree.Walk(m, func(m any) bool {
		fn(m)
		return true
	})
}
