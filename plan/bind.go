//go:build cgo

package plan

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/sql"
	pg "github.com/loredb/lore/sql/pgast"
	"github.com/loredb/lore/types"
)

// Bind turns a parsed SELECT into a logical plan.
//
// opts.Paths marks the byte positions of FROM items that were written as string
// literals ('dir/*.parquet'): those name locations, never tables.
func Bind(ctx context.Context, cat Catalog, sel *pg.SelectStmt, opts BindOptions) (Node, error) {
	b := &binder{ctx: ctx, cat: cat, now: time.Now().UTC(), nowUsed: opts.NowUsed, paths: opts.Paths, approximate: opts.Approximate, dialect: opts.Dialect, tryCasts: opts.TryCasts, timeTravel: opts.TimeTravel,
		noColumnsCall: opts.NoColumnsCall}
	b.ignoreNulls = maps.Clone(opts.IgnoreNulls)
	n, err := b.bindQuery(sel, nil)
	if err != nil {
		return nil, err
	}
	if err := b.unusedIgnoreNulls(sel); err != nil {
		return nil, err
	}
	if err := checkNoOuterRefs(n); err != nil {
		return nil, err
	}
	return n, nil
}

// BindExpr binds a standalone expression over the given columns (used for predicates
// of Lore's own statements, such as OPTIMIZE … WHERE).
func BindExpr(ctx context.Context, node *pg.Node, cols []Column) (Expr, error) {
	b := &binder{ctx: ctx, now: time.Now().UTC()}
	return b.expr(node, &exprCtx{sc: newScope(cols)})
}

// BindOptions are what binding needs beyond the statement.
type BindOptions struct {
	// Paths marks the positions of FROM items written as string literals.
	Paths map[int]bool
	// Approximate computes a plain COUNT(DISTINCT x) as approx_count_distinct(x)
	// (the approximate setting).
	Approximate bool
	// Dialect holds the DuckDB forms the parser read around PostgreSQL's grammar.
	Dialect *sql.Dialect
	// IgnoreNulls marks the positions of function calls written with IGNORE NULLS.
	IgnoreNulls map[int]bool
	// TryCasts marks the positions of the casts written TRY_CAST.
	TryCasts map[int]bool
	// TimeTravel holds version clauses by the position of the table they follow.
	TimeTravel map[int]sql.TimeTravel
	// NowUsed, when not nil, is set when the statement reads the current time (now(),
	// current_date, …): its result depends on when it runs, not only on its data.
	NowUsed *bool
	// NoColumnsCall says the statement calls no COLUMNS(…) (sql.Query.NoColumnsCall).
	NoColumnsCall bool
}

type binder struct {
	ctx         context.Context
	cat         Catalog
	paths       map[int]bool
	approximate bool
	dialect     *sql.Dialect
	// noColumnsCall: the statement calls no COLUMNS(…).
	noColumnsCall bool
	timeTravel    map[int]sql.TimeTravel
	tryCasts      map[int]bool
	ctes          []map[string]*cteDef
	now           time.Time
	nowUsed       *bool
	// pending holds an aggregating SELECT's correlated subqueries until its
	// aggregate exists.
	pending map[*aggState]*pendingSubs
	// windows are the named windows of the SELECT being bound (namedWindows).
	windows map[string]*pg.WindowDef
	// ignoreNulls are the positions of the calls written with IGNORE NULLS that no
	// window function has taken yet.
	ignoreNulls map[int]bool
}

// clock is the statement's current time, noted as read (BindOptions.NowUsed).
func (b *binder) clock() time.Time {
	if b.nowUsed != nil {
		*b.nowUsed = true
	}
	return b.now
}

// cteDef is a WITH query. It is bound once, at its first reference; when it is named
// more than once, every reference reads one Shared plan, computed once.
type cteDef struct {
	def    *pg.CommonTableExpr
	shared *Shared
	first  *Project // what the first reference reads it through
	// recursive marks a WITH RECURSIVE query that names itself; work is its work
	// table while its recursive part is being bound.
	recursive bool
	work      *WorkTable
}

// inline puts the plan of a WITH query named only once straight in its place, where
// the rules can push into it; one named more often stays shared.
func (d *cteDef) inline() {
	if d.shared != nil && d.shared.Refs == 1 {
		d.first.Input = d.shared.Input
	}
}

func (b *binder) lookupCTE(name string) (*cteDef, int) {
	for i := len(b.ctes) - 1; i >= 0; i-- {
		if d, ok := b.ctes[i][name]; ok {
			return d, i
		}
	}
	return nil, -1
}

// bindQuery binds a SELECT, VALUES or set operation with its WITH, ORDER BY and LIMIT.
func (b *binder) bindQuery(sel *pg.SelectStmt, outer *scope) (Node, error) {
	if err := b.ctx.Err(); err != nil {
		return nil, err
	}
	if sel.WithClause != nil {
		frame := map[string]*cteDef{}
		b.ctes = append(b.ctes, frame)
		defer func() {
			b.ctes = b.ctes[:len(b.ctes)-1]
			for _, d := range frame {
				d.inline()
			}
		}()
		for _, c := range sel.WithClause.Ctes {
			def := c.GetCommonTableExpr()
			if def == nil {
				continue
			}
			if _, dup := frame[def.Ctename]; dup {
				return nil, errs.At(errs.Analysis, int(def.Location), "WITH query name %q specified more than once", def.Ctename)
			}
			frame[def.Ctename] = &cteDef{def: def, recursive: sel.WithClause.Recursive && selfReference(def.Ctequery, def.Ctename)}
		}
	}
	if len(sel.LockingClause) > 0 || sel.IntoClause != nil {
		return nil, errs.New(errs.Analysis, "SELECT INTO and locking clauses are not supported")
	}
	switch {
	case sel.Op != pg.SetOperation_SETOP_NONE && sel.Op != pg.SetOperation_SET_OPERATION_UNDEFINED:
		n, err := b.bindSetOp(sel, outer)
		if err != nil {
			return nil, err
		}
		return b.orderLimitOutput(n, sel)
	case len(sel.ValuesLists) > 0:
		n, err := b.bindValues(sel, outer)
		if err != nil {
			return nil, err
		}
		return b.orderLimitOutput(n, sel)
	}
	return b.bindSelect(sel, outer)
}

// orderLimitOutput applies ORDER BY (by output name, ordinal or expression over the
// output columns) and LIMIT/OFFSET to a set operation or VALUES.
func (b *binder) orderLimitOutput(n Node, sel *pg.SelectStmt) (Node, error) {
	if len(sel.SortClause) > 0 {
		sc := newScope(n.Columns())
		var keys []SortKey
		sortClause, err := b.orderByAll(sel.SortClause, len(n.Columns()))
		if err != nil {
			return nil, err
		}
		for _, s := range sortClause {
			sb := s.GetSortBy()
			var e Expr
			if idx, ok, err := ordinal(sb.Node, len(n.Columns())); err != nil {
				return nil, err
			} else if ok {
				c := n.Columns()[idx]
				e = &ColRef{Idx: idx, T: c.Type, Name: c.Name}
			} else {
				var err error
				if e, err = b.expr(sb.Node, &exprCtx{sc: sc}); err != nil {
					return nil, err
				}
				e = settle(e)
			}
			keys = append(keys, sortKey(e, sb))
		}
		n = &Sort{Input: n, Keys: keys}
	}
	return b.applyLimit(n, sel)
}

func sortKey(e Expr, sb *pg.SortBy) SortKey {
	k := SortKey{E: e, Desc: sb.SortbyDir == pg.SortByDir_SORTBY_DESC}
	switch sb.SortbyNulls {
	case pg.SortByNulls_SORTBY_NULLS_FIRST:
		k.NullsFirst = true
	case pg.SortByNulls_SORTBY_NULLS_LAST:
		k.NullsFirst = false
	default:
		// DuckDB's default: NULLS LAST for both directions.
		k.NullsFirst = false
	}
	return k
}

func (b *binder) applyLimit(n Node, sel *pg.SelectStmt) (Node, error) {
	if sel.LimitCount == nil && sel.LimitOffset == nil {
		return n, nil
	}
	if b.dialect.IsPercent(sel.LimitCount) {
		return b.limitPercent(n, sel)
	}
	l := &Limit{Input: n, Count: -1}
	if sel.LimitCount != nil {
		if c := sel.LimitCount.GetAConst(); c != nil && c.Isnull {
			// LIMIT NULL / LIMIT ALL: no limit.
		} else {
			v, err := b.constInt(sel.LimitCount, "LIMIT")
			if err != nil {
				return nil, err
			}
			l.Count = v
		}
	}
	if sel.LimitOffset != nil {
		v, err := b.constInt(sel.LimitOffset, "OFFSET")
		if err != nil {
			return nil, err
		}
		l.Offset = v
	}
	return l, nil
}

func (b *binder) constInt(n *pg.Node, what string) (int64, error) {
	e, err := b.expr(n, &exprCtx{sc: newScope(nil)})
	if err != nil {
		return 0, err
	}
	lit, ok := e.(*Literal)
	if !ok || !types.IsInteger(lit.V.Type) || lit.V.Null {
		return 0, errs.At(errs.Analysis, location(n), "%s must be a non-negative integer constant", what)
	}
	v := lit.V.I
	if types.IsUnsigned(lit.V.Type) {
		v = int64(lit.V.U)
	}
	if v < 0 {
		return 0, errs.At(errs.Analysis, location(n), "%s must not be negative", what)
	}
	return v, nil
}

// ordinal recognises an integer constant in ORDER BY / GROUP BY as a 0-based position.
func ordinal(n *pg.Node, count int) (int, bool, error) {
	c := n.GetAConst()
	if c == nil {
		return 0, false, nil
	}
	iv, ok := c.Val.(*pg.A_Const_Ival)
	if !ok {
		return 0, false, nil
	}
	k := int(iv.Ival.Ival)
	if k < 1 || k > count {
		return 0, false, errs.At(errs.Analysis, int(c.Location), "position %d is not in select list", k)
	}
	return k - 1, true, nil
}

func (b *binder) bindSetOp(sel *pg.SelectStmt, outer *scope) (Node, error) {
	left, err := b.bindQuery(sel.Larg, outer)
	if err != nil {
		return nil, err
	}
	right, err := b.bindQuery(sel.Rarg, outer)
	if err != nil {
		return nil, err
	}
	if b.dialect.ByName(sel) {
		if left, right, err = byName(left, right); err != nil {
			return nil, err
		}
	}
	lc, rc := left.Columns(), right.Columns()
	if len(lc) != len(rc) {
		return nil, errs.New(errs.Analysis, "set operation inputs have %d and %d columns", len(lc), len(rc))
	}
	cols := make([]Column, len(lc))
	lx, rx := make([]Expr, len(lc)), make([]Expr, len(lc))
	lcast, rcast := false, false
	for i := range lc {
		t, ok := commonType(lc[i].Type, rc[i].Type)
		if !ok {
			return nil, errs.New(errs.Analysis, "set operation column %d has types %s and %s with no common type",
				i+1, types.Name(lc[i].Type), types.Name(rc[i].Type))
		}
		cols[i] = Column{Name: lc[i].Name, Type: t}
		lx[i] = castTo(&ColRef{Idx: i, T: lc[i].Type, Name: lc[i].Name}, t)
		rx[i] = castTo(&ColRef{Idx: i, T: rc[i].Type, Name: rc[i].Name}, t)
		lcast = lcast || !sameType(lc[i].Type, t)
		rcast = rcast || !sameType(rc[i].Type, t)
	}
	if lcast {
		left = &Project{Input: left, Exprs: lx, Cols: cols}
	}
	if rcast {
		right = &Project{Input: right, Exprs: rx, Cols: cols}
	}
	kind := Union
	switch sel.Op {
	case pg.SetOperation_SETOP_INTERSECT:
		kind = Intersect
	case pg.SetOperation_SETOP_EXCEPT:
		kind = Except
	}
	return &SetOp{Kind: kind, All: sel.All, Left: left, Right: right, Cols: cols}, nil
}

func (b *binder) bindValues(sel *pg.SelectStmt, outer *scope) (Node, error) {
	var rows [][]Expr
	ec := &exprCtx{sc: newScope(nil)}
	if outer != nil {
		ec.sc.outer = outer
	}
	for _, l := range sel.ValuesLists {
		items := l.GetList().GetItems()
		if len(rows) > 0 && len(items) != len(rows[0]) {
			return nil, errs.New(errs.Analysis, "VALUES lists must all be the same length")
		}
		row := make([]Expr, len(items))
		for i, it := range items {
			e, err := b.expr(it, ec)
			if err != nil {
				return nil, err
			}
			row[i] = settle(e)
		}
		rows = append(rows, row)
	}
	cols := make([]Column, len(rows[0]))
	for i := range cols {
		t := rows[0][i].Type()
		for _, r := range rows[1:] {
			var ok bool
			if t, ok = commonType(t, r[i].Type()); !ok {
				return nil, errs.New(errs.Analysis, "VALUES column %d has no common type", i+1)
			}
		}
		if t.ID() == types.Null.ID() {
			t = types.Int32
		}
		cols[i] = Column{Name: fmt.Sprintf("col%d", i), Type: t}
		for _, r := range rows {
			r[i] = castTo(r[i], t)
		}
	}
	return &Values{Cols: cols, Rows: rows}, nil
}

// bindFrom binds the FROM list as a left-deep tree of cross joins.
func (b *binder) bindFrom(items []*pg.Node, outer *scope) (Node, error) {
	if len(items) == 0 {
		return &Values{Rows: [][]Expr{{}}}, nil
	}
	var n Node
	for _, it := range items {
		if rs := lateralOf(it); rs != nil && n != nil {
			var err error
			if n, err = b.bindLateral(n, rs, CrossJoin, nil, outer); err != nil {
				return nil, err
			}
			continue
		}
		if rf, fc := unnestFunction(it); rf != nil {
			var err error
			if n, err = b.bindUnnestFrom(n, rf, fc, outer); err != nil {
				return nil, err
			}
			continue
		}
		var r Node
		var err error
		if rs := it.GetRangeSubselect(); rs != nil && n != nil {
			var lateral bool
			if r, lateral, err = b.derivedAfter(n, rs, CrossJoin, nil, outer); err != nil {
				return nil, err
			}
			if lateral {
				n = r
				continue
			}
		} else if r, err = b.bindFromItem(it, outer); err != nil {
			return nil, err
		}
		if n == nil {
			n = r
			continue
		}
		n = &Join{Kind: CrossJoin, Left: n, Right: r, Cols: concatCols(n.Columns(), r.Columns())}
	}
	return n, nil
}

// usingEquality is the condition USING (name) puts on a join of lc (scope ls) and
// rc (scope rs): the left's column name equal to the right's, which are lc[li] and
// rc[ri].
func (b *binder) usingEquality(ls, rs *scope, lc, rc []Column, name string) (eq Expr, li, ri int, err error) {
	if li, err = ls.resolve("", name, errs.NoPosition); err != nil {
		return nil, 0, 0, err
	}
	if ri, err = rs.resolve("", name, errs.NoPosition); err != nil {
		return nil, 0, 0, err
	}
	eq, err = b.call("=", []Expr{
		&ColRef{Idx: li, T: lc[li].Type, Name: name},
		&ColRef{Idx: len(lc) + ri, T: rc[ri].Type, Name: name}}, errs.NoPosition)
	return eq, li, ri, err
}

func concatCols(a, b []Column) []Column {
	out := make([]Column, 0, len(a)+len(b))
	return append(append(out, a...), b...)
}

func requalify(cols []Column, alias *pg.Alias, def string) ([]Column, error) {
	out := make([]Column, len(cols))
	qual := def
	if alias != nil && alias.Aliasname != "" {
		qual = alias.Aliasname
	}
	for i, c := range cols {
		out[i] = Column{Name: c.Name, Type: c.Type, Table: qual}
	}
	if alias != nil && len(alias.Colnames) > 0 {
		if len(alias.Colnames) > len(cols) {
			return nil, errs.New(errs.Analysis, "table %q has %d columns available but %d columns specified",
				qual, len(cols), len(alias.Colnames))
		}
		for i, cn := range alias.Colnames {
			out[i].Name = cn.GetString_().GetSval()
		}
	}
	return out, nil
}

// rename wraps n in a projection that only renames its columns.
func rename(n Node, cols []Column) *Project {
	in := n.Columns()
	exprs := make([]Expr, len(in))
	for i, c := range in {
		exprs[i] = &ColRef{Idx: i, T: c.Type, Name: c.Name}
	}
	return &Project{Input: n, Exprs: exprs, Cols: cols}
}

func (b *binder) bindFromItem(it *pg.Node, outer *scope) (Node, error) {
	switch {
	case it.GetRangeVar() != nil:
		rv := it.GetRangeVar()
		name := rv.Relname
		if rv.Schemaname != "" {
			name = rv.Schemaname + "." + rv.Relname
		}
		at, err := b.asOf(int(rv.Location))
		if err != nil {
			return nil, err
		}
		if b.paths[int(rv.Location)] {
			ref, err := b.cat.Path(b.ctx, rv.Relname, "parquet", at)
			if err != nil {
				return nil, err
			}
			return b.scanNode(ref, rv.Alias, tableQualifier(rv.Relname))
		}
		if rv.Schemaname == "" && at.Latest() {
			if d, depth := b.lookupCTE(rv.Relname); d != nil {
				if d.work != nil {
					cols, err := requalify(d.work.Cols, rv.Alias, rv.Relname)
					if err != nil {
						return nil, err
					}
					return rename(d.work, cols), nil
				}
				saved := b.ctes
				b.ctes = append([]map[string]*cteDef(nil), b.ctes[:depth]...)
				// A CTE may reference CTEs defined before it in the same WITH.
				frame := map[string]*cteDef{}
				for k, v := range saved[depth] {
					if v != d && v.def.Location < d.def.Location || v == d && d.recursive {
						frame[k] = v
					}
				}
				if d.shared == nil {
					b.ctes = append(b.ctes, frame)
					var n Node
					var err error
					if d.recursive {
						n, err = b.bindRecursive(d)
					} else {
						n, err = b.bindQuery(d.def.Ctequery.GetSelectStmt(), nil)
					}
					b.ctes = saved
					if err != nil {
						return nil, err
					}
					d.shared = &Shared{Input: n}
				}
				b.ctes = saved
				d.shared.Refs++
				n := Node(d.shared)
				cols := n.Columns()
				var err error
				if len(d.def.Aliascolnames) > 0 {
					cols, err = requalify(cols, &pg.Alias{Colnames: d.def.Aliascolnames}, rv.Relname)
					if err != nil {
						return nil, err
					}
				}
				cols, err = requalify(cols, rv.Alias, rv.Relname)
				if err != nil {
					return nil, err
				}
				p := rename(n, cols)
				if d.first == nil {
					d.first = p
				}
				return p, nil
			}
		}
		ref, err := b.cat.Table(b.ctx, name, at)
		if err != nil && errs.CodeOf(err) == errs.TableNotFound && looksLikePath(name) {
			ref, err = b.cat.Path(b.ctx, name, "parquet", at)
		}
		if err != nil {
			if e, ok := err.(*errs.Error); ok && e.Pos == errs.NoPosition {
				e.Pos = int(rv.Location)
			}
			return nil, err
		}
		return b.scanNode(ref, rv.Alias, tableQualifier(rv.Relname))
	case it.GetRangeSubselect() != nil:
		rs := it.GetRangeSubselect()
		// A derived table of a subquery may name the enclosing query's columns.
		n, err := b.bindQuery(rs.Subquery.GetSelectStmt(), outer)
		if err != nil {
			return nil, err
		}
		cols, err := requalify(n.Columns(), rs.Alias, "")
		if err != nil {
			return nil, err
		}
		return rename(n, cols), nil
	case it.GetRangeFunction() != nil:
		return b.bindTableFunction(it.GetRangeFunction())
	case it.GetJoinExpr() != nil:
		return b.bindJoin(it.GetJoinExpr(), outer)
	}
	return nil, errs.New(errs.Analysis, "unsupported FROM item")
}

// tableQualifier is the qualifier a path scan's columns get: the file's base name
// without extension, as DuckDB does.
func tableQualifier(name string) string {
	if !looksLikePath(name) {
		return name
	}
	base := name[strings.LastIndexByte(name, '/')+1:]
	if i := strings.IndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	return base
}

func looksLikePath(name string) bool {
	return strings.ContainsAny(name, "/*?") || strings.HasSuffix(strings.ToLower(name), ".parquet")
}

// asOf is the version clause written after the table at position pos, if any.
func (b *binder) asOf(pos int) (source.AsOf, error) {
	tt, ok := b.timeTravel[pos]
	if !ok {
		return source.AsOf{}, nil
	}
	if tt.IsVersion {
		return source.AsOf{Version: tt.Version, HasVersion: true}, nil
	}
	v, err := kernels.ParseLiteral(tt.Timestamp, types.TimestampTZ)
	if err != nil || v.Null {
		return source.AsOf{}, errs.At(errs.Analysis, tt.Pos, "TIMESTAMP AS OF %s is not a timestamp", types.QuoteString(tt.Timestamp))
	}
	return source.AsOf{Time: time.UnixMicro(v.I).UTC()}, nil
}

func (b *binder) scanNode(ref *TableRef, alias *pg.Alias, qual string) (Node, error) {
	fields := ref.Listing.Schema.Fields()
	cols := make([]Column, len(fields))
	for i, f := range fields {
		cols[i] = Column{Name: f.Name, Type: f.Type, Table: qual}
	}
	if alias != nil {
		var err error
		if cols, err = requalify(cols, alias, qual); err != nil {
			return nil, err
		}
	}
	return &Scan{Ref: ref, Alias: qual, Cols: cols}, nil
}

func (b *binder) bindTableFunction(rf *pg.RangeFunction) (Node, error) {
	if len(rf.Functions) != 1 {
		return nil, errs.New(errs.Analysis, "unsupported table function")
	}
	items := rf.Functions[0].GetList().GetItems()
	if len(items) == 0 || items[0].GetFuncCall() == nil {
		return nil, errs.New(errs.Analysis, "unsupported table function")
	}
	fc := items[0].GetFuncCall()
	name := funcName(fc)
	format := "parquet"
	switch name {
	case "read_parquet", "parquet_scan":
	case "delta_scan":
		format = "delta"
	case "iceberg_scan":
		format = "iceberg"
	case "range", "generate_series":
		return b.bindSeries(name, fc, rf.Alias)
	case "unnest":
		// In a JOIN: the list cannot name the other side's columns.
		return b.bindUnnestFrom(nil, rf, fc, nil)
	default:
		return nil, errs.At(errs.Analysis, int(fc.Location), "table function %s does not exist", name)
	}
	if len(fc.Args) == 0 || fc.Args[0].GetAConst() == nil {
		return nil, errs.At(errs.Analysis, int(fc.Location), "%s takes one string literal: the location", name)
	}
	sv, ok := fc.Args[0].GetAConst().Val.(*pg.A_Const_Sval)
	if !ok {
		return nil, errs.At(errs.Analysis, int(fc.Location), "%s takes one string literal: the location", name)
	}
	at, err := b.asOf(int(rf.Functions[0].GetList().GetItems()[0].GetFuncCall().Location))
	if err != nil {
		return nil, err
	}
	if at, err = scanOptions(name, format, int(fc.Location), fc.Args[1:], at); err != nil {
		return nil, err
	}
	ref, err := b.cat.Path(b.ctx, sv.Sval.Sval, format, at)
	if err != nil {
		return nil, err
	}
	qual := name
	if rf.Alias != nil {
		qual = rf.Alias.Aliasname
	}
	return b.scanNode(ref, rf.Alias, qual)
}

// scanOptions reads the named arguments of a table function that scans a location
// (name => value, or DuckDB's name = value) into the version it reads. delta_scan
// takes version => <Delta version>; iceberg_scan takes DuckDB's: version (the
// metadata version, a name or number the metadata file's name carries),
// version_name_format, snapshot_from_id, snapshot_from_timestamp, and
// allow_moved_paths and metadata_compression_codec, which change nothing (moved
// tables and gzip metadata are always read).
func scanOptions(name, format string, pos int, args []*pg.Node, at source.AsOf) (source.AsOf, error) {
	bad := func(msg string, a ...any) (source.AsOf, error) {
		return source.AsOf{}, errs.At(errs.Analysis, pos, "%s: "+msg, append([]any{name}, a...)...)
	}
	for _, arg := range args {
		var key string
		var val *pg.A_Const
		switch {
		case arg.GetNamedArgExpr() != nil:
			na := arg.GetNamedArgExpr()
			key, val = na.Name, na.Arg.GetAConst()
		case arg.GetAExpr() != nil && arg.GetAExpr().Kind == pg.A_Expr_Kind_AEXPR_OP && len(arg.GetAExpr().Name) == 1 &&
			arg.GetAExpr().Name[0].GetString_().GetSval() == "=" && arg.GetAExpr().Lexpr.GetColumnRef() != nil &&
			len(arg.GetAExpr().Lexpr.GetColumnRef().Fields) == 1:
			key = arg.GetAExpr().Lexpr.GetColumnRef().Fields[0].GetString_().GetSval()
			val = arg.GetAExpr().Rexpr.GetAConst()
		default:
			return bad("arguments after the location are named (name => value)")
		}
		if val == nil || val.Isnull {
			return bad("%s takes a literal", key)
		}
		text := constText(val)
		key = strings.ToLower(key)
		switch {
		case format == "delta" && key == "version", format == "iceberg" && key == "snapshot_from_id":
			n, err := strconv.ParseInt(text, 10, 64)
			if err != nil {
				return bad("%s takes an integer, not %s", key, text)
			}
			at.Version, at.HasVersion = n, true
		case format == "iceberg" && key == "version":
			at.Metadata = text
		case format == "iceberg" && key == "version_name_format":
			for _, f := range strings.Split(text, ",") {
				if err := source.CheckNameFormat(strings.TrimSpace(f)); err != nil {
					return source.AsOf{}, errs.At(errs.Analysis, pos, "%s: %v", name, err)
				}
			}
			at.NameFormat = text
		case format == "iceberg" && key == "snapshot_from_timestamp":
			v, err := kernels.ParseLiteral(text, types.TimestampTZ)
			if err != nil || v.Null {
				return bad("snapshot_from_timestamp %s is not a timestamp", types.QuoteString(text))
			}
			at.Time = time.UnixMicro(v.I).UTC()
		case format == "iceberg" && (key == "allow_moved_paths" || key == "metadata_compression_codec"):
		default:
			return bad("no argument %s", key)
		}
	}
	return at, nil
}

// constText is a literal's text: a string's value, a number's digits, true or false.
func constText(c *pg.A_Const) string {
	switch v := c.Val.(type) {
	case *pg.A_Const_Sval:
		return v.Sval.Sval
	case *pg.A_Const_Ival:
		return strconv.FormatInt(int64(v.Ival.Ival), 10)
	case *pg.A_Const_Fval:
		return v.Fval.Fval
	case *pg.A_Const_Boolval:
		return strconv.FormatBool(v.Boolval.Boolval)
	}
	return ""
}

func (b *binder) bindJoin(j *pg.JoinExpr, outer *scope) (Node, error) {
	if j.Rtindex == sql.SemiJoinMark || j.Rtindex == sql.AntiJoinMark {
		return b.bindSemiAntiJoin(j, outer)
	}
	left, err := b.bindFromItem(j.Larg, outer)
	if err != nil {
		return nil, err
	}
	if rs := lateralOf(j.Rarg); rs != nil {
		return b.bindLateralJoin(left, rs, j, outer)
	}
	var right Node
	if rs := j.Rarg.GetRangeSubselect(); rs != nil && len(j.UsingClause) == 0 && !j.IsNatural {
		kind := InnerJoin
		switch {
		case j.Jointype == pg.JoinType_JOIN_LEFT:
			kind = LeftJoin
		case j.Jointype == pg.JoinType_JOIN_RIGHT:
			kind = RightJoin
		case j.Jointype == pg.JoinType_JOIN_FULL:
			kind = FullJoin
		case j.Quals == nil:
			kind = CrossJoin
		}
		r, lateral, err := b.derivedAfter(left, rs, kind, j.Quals, outer)
		if err != nil || lateral {
			return r, err
		}
		right = r
	} else if right, err = b.bindFromItem(j.Rarg, outer); err != nil {
		return nil, err
	}
	var kind JoinKind
	switch j.Jointype {
	case pg.JoinType_JOIN_INNER:
		kind = InnerJoin
		if j.Quals == nil && len(j.UsingClause) == 0 && !j.IsNatural {
			kind = CrossJoin
		}
	case pg.JoinType_JOIN_LEFT:
		kind = LeftJoin
	case pg.JoinType_JOIN_RIGHT:
		kind = RightJoin
	case pg.JoinType_JOIN_FULL:
		kind = FullJoin
	default:
		return nil, errs.New(errs.Analysis, "unsupported join type")
	}
	lc, rc := left.Columns(), right.Columns()
	cols := concatCols(lc, rc)
	join := &Join{Kind: kind, Left: left, Right: right, Cols: cols}
	sc := newScope(cols)
	sc.outer = outer
	var using []string
	if j.IsNatural {
		for _, l := range lc {
			for _, r := range rc {
				if strings.EqualFold(l.Name, r.Name) {
					using = append(using, l.Name)
				}
			}
		}
		if len(using) == 0 {
			join.Kind = CrossJoin
		}
	}
	for _, u := range j.UsingClause {
		using = append(using, u.GetString_().GetSval())
	}
	var hiddenRight, mergeLeft []int
	if len(using) > 0 {
		ls, rs := newScope(lc), newScope(rc)
		var conds []Expr
		for _, name := range using {
			eq, li, ri, err := b.usingEquality(ls, rs, lc, rc, name)
			if err != nil {
				return nil, err
			}
			conds = append(conds, eq)
			hiddenRight = append(hiddenRight, len(lc)+ri)
			mergeLeft = append(mergeLeft, li)
		}
		splitJoinCondition(join, AndAll(conds))
	} else if j.Quals != nil {
		if containsSubLink(j.Quals) {
			return b.joinOnSubquery(join, j.Quals, sc, outer)
		}
		cond, err := b.expr(j.Quals, &exprCtx{sc: sc, noSubquery: true})
		if err != nil {
			return nil, err
		}
		if cond, err = b.boolean(cond, "JOIN condition"); err != nil {
			return nil, err
		}
		splitJoinCondition(join, cond)
	}
	var n Node = join
	if len(using) > 0 {
		// The USING columns appear once: from the left input, or COALESCE(left, right)
		// for right and full joins.
		exprs := make([]Expr, len(cols))
		outCols := append([]Column(nil), cols...)
		for i, c := range cols {
			exprs[i] = &ColRef{Idx: i, T: c.Type, Name: c.Name}
		}
		for k, li := range mergeLeft {
			ri := hiddenRight[k]
			if kind == RightJoin || kind == FullJoin {
				t, _ := commonType(cols[li].Type, cols[ri].Type)
				co, err := b.call("coalesce", []Expr{castTo(exprs[li], t), castTo(exprs[ri], t)}, errs.NoPosition)
				if err != nil {
					return nil, err
				}
				exprs[li] = co
				outCols[li].Type = t
			}
			outCols[ri].Hidden, outCols[ri].Merged = true, true
		}
		n = &Project{Input: join, Exprs: exprs, Cols: outCols}
	}
	return n, nil
}

// splitJoinCondition adds each conjunct of cond to the join (see AddJoinCondition).
func splitJoinCondition(j *Join, cond Expr) {
	for _, c := range Conjuncts(cond) {
		AddJoinCondition(j, c)
	}
}
