package dist

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/internal/wire"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/types"
)

// A fragment is the part of a statement's plan that workers run: an aggregate over
// one table's scan, through filters and projections. Its expressions travel as
// what they are made of — columns, constants, casts, CASE, IN lists and calls of
// functions by name — and a worker resolves each call again from its name and its
// arguments' types, as the binder did; it never sees SQL.
//
//	"LAF" fragmentVersion             four bytes
//	types                             length-prefixed: an Arrow IPC stream whose
//	                                  schema's fields are every type the fragment
//	                                  names (no record)
//	constants                         length-prefixed: an Arrow IPC stream of one
//	                                  record of one row, a column per constant
//	the aggregate                     groups, aggregates, columns, sets, groupings
//	its input                         node by node down to the scan
//
// Types and constants are named by their index. Nodes and expressions begin with a
// tag byte (the constants below); lists with their length as a uvarint; text is
// length-prefixed.
const fragmentVersion = 1

var fragmentForm = wire.Form{Magic: [3]byte{'L', 'A', 'F'}, Version: fragmentVersion, What: "a plan fragment"}

// Node tags.
const (
	tagScan byte = 1 + iota
	tagFilter
	tagProject
)

// Expression tags.
const (
	tagColumn byte = 1 + iota
	tagConstant
	tagCall
	tagCast
	tagCase
	tagInList
	tagUnused
)

// Distributable reports, with the reason when not, whether a's plan can run on
// workers as a fragment: its input is filters and projections over one scan whose
// pruning needs no value computed as the statement runs, and it holds no subquery
// or lambda. It returns the scan.
func Distributable(a *plan.Aggregate) (*plan.Scan, error) {
	for n := a.Input; ; {
		switch x := n.(type) {
		case *plan.Scan:
			if len(x.Deferred) > 0 {
				return nil, notDistributable("its scan prunes with values computed as it runs (a subquery)")
			}
			return x, nil
		case *plan.Filter:
			n = x.Input
		case *plan.Project:
			n = x.Input
		default:
			return nil, notDistributable(fmt.Sprintf("the aggregate's input is not one table's scan, filtered and projected (it reads %T)", n))
		}
	}
}

func notDistributable(why string) error {
	return errs.New(errs.InvalidSetting, "execution = 'beam' runs an aggregate over one table's scan on workers; this statement cannot run there: %s", why)
}

// MarshalFragment returns the byte form of aggregate a and its input (which
// Distributable accepts). The scan's table is not in it — workers resolve it from
// their zones' descriptors — nor are a's seeds: the coordinator merges those.
func MarshalFragment(a *plan.Aggregate) ([]byte, error) {
	if _, err := Distributable(a); err != nil {
		return nil, err
	}
	// The body is written first: it names the types and constants that go before it.
	e := &fragmentWriter{w: &wire.Writer{}, typeAt: map[arrow.DataType]int{}}
	if err := e.aggregate(a); err != nil {
		return nil, err
	}
	if err := e.node(a.Input); err != nil {
		return nil, err
	}
	tb, err := e.typeBytes()
	if err != nil {
		return nil, err
	}
	cb, err := e.constantBytes()
	if err != nil {
		return nil, err
	}
	w := fragmentForm.Writer()
	w.Bytes(tb)
	w.Bytes(cb)
	w.B = append(w.B, e.w.B...)
	return w.B, nil
}

type fragmentWriter struct {
	w      *wire.Writer
	types  []arrow.DataType
	typeAt map[arrow.DataType]int
	consts []types.Value
}

func (e *fragmentWriter) typ(t arrow.DataType) {
	i, ok := e.typeAt[t]
	if !ok {
		for j, u := range e.types {
			if arrow.TypeEqual(t, u) {
				i, ok = j, true
				break
			}
		}
		if !ok {
			i = len(e.types)
			e.types = append(e.types, t)
		}
		e.typeAt[t] = i
	}
	e.w.Uvarint(uint64(i))
}

func (e *fragmentWriter) text(s string) { e.w.Bytes([]byte(s)) }

func (e *fragmentWriter) constant(v types.Value) {
	e.w.Uvarint(uint64(len(e.consts)))
	e.consts = append(e.consts, v)
	e.typ(v.Type)
}

func (e *fragmentWriter) typeBytes() ([]byte, error) {
	fields := make([]arrow.Field, len(e.types))
	for i, t := range e.types {
		fields[i] = arrow.Field{Name: fmt.Sprint("t", i), Type: t, Nullable: true}
	}
	b, err := ipcStream(arrow.NewSchema(fields, nil))
	if err != nil {
		return nil, notDistributable(fmt.Sprintf("its types have no Arrow form: %v", err))
	}
	return b, nil
}

func (e *fragmentWriter) constantBytes() ([]byte, error) {
	fields := make([]arrow.Field, len(e.consts))
	cols := make([]arrow.Array, len(e.consts))
	for i, v := range e.consts {
		cols[i] = kernels.ConstArray(v, 1)
		fields[i] = arrow.Field{Name: fmt.Sprint("c", i), Type: cols[i].DataType(), Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	rec := array.NewRecord(schema, cols, 1)
	defer rec.Release()
	b, err := ipcStream(schema, rec)
	if err != nil {
		return nil, notDistributable(fmt.Sprintf("its constants have no Arrow form: %v", err))
	}
	return b, nil
}

func (e *fragmentWriter) aggregate(a *plan.Aggregate) error {
	if err := e.exprs(a.Groups); err != nil {
		return err
	}
	e.w.Uvarint(uint64(len(a.Aggs)))
	for i := range a.Aggs {
		c := &a.Aggs[i]
		e.text(c.Func)
		if err := e.optExpr(c.Arg); err != nil {
			return err
		}
		e.typ(c.T)
		e.w.Uvarint(uint64(len(c.Quantiles)))
		for _, q := range c.Quantiles {
			e.w.F64(q)
		}
		e.w.Bool(c.List)
		e.text(c.Written)
		if err := e.optExpr(c.Filter); err != nil {
			return err
		}
		if err := e.exprs(c.Args); err != nil {
			return err
		}
		e.text(c.Sep)
		e.w.Bool(c.FromTop)
		e.w.Bool(c.Distinct)
		e.w.Uvarint(uint64(len(c.Order)))
		for _, k := range c.Order {
			if err := e.expr(k.E); err != nil {
				return err
			}
			e.w.Bool(k.Desc)
			e.w.Bool(k.NullsFirst)
		}
	}
	e.columns(a.Cols)
	e.lists(a.Sets)
	e.lists(a.Groupings)
	return nil
}

func (e *fragmentWriter) lists(ls [][]int) {
	e.w.Uvarint(uint64(len(ls)))
	for _, l := range ls {
		e.w.Uvarint(uint64(len(l)))
		for _, v := range l {
			e.w.Uvarint(uint64(v))
		}
	}
}

func (e *fragmentWriter) columns(cols []plan.Column) {
	e.w.Uvarint(uint64(len(cols)))
	for _, c := range cols {
		e.text(c.Name)
		e.typ(c.Type)
		e.text(c.Table)
		e.w.Bool(c.Hidden)
		e.w.Bool(c.Merged)
	}
}

func (e *fragmentWriter) node(n plan.Node) error {
	switch x := n.(type) {
	case *plan.Scan:
		e.w.B = append(e.w.B, tagScan)
		e.text(x.Alias)
		e.columns(x.Cols)
		e.w.Bool(x.Required != nil)
		for _, r := range x.Required {
			e.w.Bool(r)
		}
		e.w.Uvarint(uint64(len(x.Filters)))
		for _, f := range x.Filters {
			e.text(f.Column)
			e.text(f.Op)
			e.w.Uvarint(uint64(len(f.Values)))
			for _, v := range f.Values {
				e.constant(v)
			}
		}
		return nil
	case *plan.Filter:
		e.w.B = append(e.w.B, tagFilter)
		if err := e.expr(x.Cond); err != nil {
			return err
		}
		return e.node(x.Input)
	case *plan.Project:
		e.w.B = append(e.w.B, tagProject)
		if err := e.exprs(x.Exprs); err != nil {
			return err
		}
		e.columns(x.Cols)
		return e.node(x.Input)
	}
	return notDistributable(fmt.Sprintf("it reads %T", n))
}

func (e *fragmentWriter) exprs(es []plan.Expr) error {
	e.w.Uvarint(uint64(len(es)))
	for _, x := range es {
		if err := e.expr(x); err != nil {
			return err
		}
	}
	return nil
}

func (e *fragmentWriter) optExpr(x plan.Expr) error {
	e.w.Bool(x != nil)
	if x == nil {
		return nil
	}
	return e.expr(x)
}

func (e *fragmentWriter) expr(x plan.Expr) error {
	switch x := x.(type) {
	case *plan.ColRef:
		e.w.B = append(e.w.B, tagColumn)
		e.w.Uvarint(uint64(x.Idx))
		e.typ(x.T)
		e.text(x.Name)
		return nil
	case *plan.Literal:
		e.w.B = append(e.w.B, tagConstant)
		e.constant(x.V)
		return nil
	case *plan.Call:
		e.w.B = append(e.w.B, tagCall)
		e.text(x.Fn.Name)
		e.typ(x.Fn.Result)
		return e.exprs(x.Args)
	case *plan.Cast:
		e.w.B = append(e.w.B, tagCast)
		e.typ(x.To)
		return e.expr(x.E)
	case *plan.Case:
		e.w.B = append(e.w.B, tagCase)
		e.typ(x.T)
		e.w.Uvarint(uint64(len(x.Whens)))
		for _, w := range x.Whens {
			if err := e.expr(w.Cond); err != nil {
				return err
			}
			if err := e.expr(w.Then); err != nil {
				return err
			}
		}
		return e.expr(x.Else)
	case *plan.Unused:
		e.w.B = append(e.w.B, tagUnused)
		e.typ(x.T)
		return nil
	case *plan.InList:
		e.w.B = append(e.w.B, tagInList)
		e.w.Bool(x.Not)
		if err := e.expr(x.E); err != nil {
			return err
		}
		return e.exprs(x.List)
	}
	return notDistributable(fmt.Sprintf("workers cannot compute %s", x))
}

// UnmarshalFragment reads a fragment's byte form: the aggregate and its input, whose
// scan has no table yet (its Ref is nil: the worker sets it). Bytes that are not a
// fragment, or name a function this version does not have for those arguments, are
// CORRUPT_SOURCE.
func UnmarshalFragment(b []byte) (*plan.Aggregate, *plan.Scan, error) {
	r, err := fragmentForm.Reader(b)
	if err != nil {
		return nil, nil, err
	}
	d := &fragmentReader{r: r}
	if d.types, err = readTypes(r.Bytes()); err != nil {
		return nil, nil, err
	}
	if d.consts, err = readConstants(r.Bytes()); err != nil {
		return nil, nil, err
	}
	a := &plan.Aggregate{}
	d.aggregate(a)
	a.Input = d.node(0)
	if err := r.End(); err != nil {
		return nil, nil, err
	}
	if d.err != nil {
		return nil, nil, d.err
	}
	scan, err := Distributable(a)
	if err != nil {
		return nil, nil, errs.New(errs.CorruptSource, "a plan fragment of another shape: %w", err)
	}
	return a, scan, nil
}

func readTypes(b []byte) ([]arrow.DataType, error) {
	rd, err := newIPCReader(b)
	if err != nil {
		return nil, errs.New(errs.CorruptSource, "a plan fragment's types cannot be read: %w", err)
	}
	defer rd.Release()
	var out []arrow.DataType
	for _, f := range rd.Schema().Fields() {
		out = append(out, f.Type)
	}
	return out, nil
}

// readConstants reads the constants' stream into values. Arrow's reader checks
// neither an array's offsets nor its lengths against its buffers: boxing a damaged
// array's value panics, and is CORRUPT_SOURCE.
func readConstants(b []byte) (_ []types.Value, err error) {
	rd, err := newIPCReader(b, ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return nil, errs.New(errs.CorruptSource, "a plan fragment's constants cannot be read: %w", err)
	}
	defer rd.Release()
	if !rd.Next() {
		if err := rd.Err(); err != nil {
			return nil, errs.New(errs.CorruptSource, "a plan fragment's constants cannot be read: %w", err)
		}
		return nil, errs.New(errs.CorruptSource, "a plan fragment without its constants")
	}
	rec := rd.Record()
	if rec.NumRows() != 1 {
		return nil, errs.New(errs.CorruptSource, "a plan fragment's constants are %d rows, not one", rec.NumRows())
	}
	defer func() {
		if r := recover(); r != nil {
			err = errs.New(errs.CorruptSource, "a plan fragment's constants cannot be read: %v", r)
		}
	}()
	out := make([]types.Value, rec.NumCols())
	for i, c := range rec.Columns() {
		c.Retain()
		out[i] = types.ValueAt(c, 0)
	}
	return out, nil
}

// maxDepth bounds the nesting of a fragment's nodes and expressions: bytes nested
// deeper are not a plan's.
const maxDepth = 10000

type fragmentReader struct {
	r      *wire.Reader
	types  []arrow.DataType
	consts []types.Value
	err    error
}

func (d *fragmentReader) fail(format string, args ...any) {
	if d.err == nil && d.r.Err() == nil {
		d.err = errs.New(errs.CorruptSource, format, args...)
	}
}

func (d *fragmentReader) ok() bool { return d.err == nil && d.r.Err() == nil }

func (d *fragmentReader) text() string { return string(d.r.Bytes()) }

func (d *fragmentReader) typ() arrow.DataType {
	i := d.r.Uvarint()
	if i >= uint64(len(d.types)) {
		d.fail("a plan fragment names type %d of %d", i, len(d.types))
		return types.Null
	}
	return d.types[i]
}

func (d *fragmentReader) index() int {
	return int(min(d.r.Uvarint(), 1<<31))
}

func (d *fragmentReader) constant() types.Value {
	i := d.r.Uvarint()
	t := d.typ()
	if i >= uint64(len(d.consts)) {
		d.fail("a plan fragment names constant %d of %d", i, len(d.consts))
		return types.NullOf(t)
	}
	v := d.consts[i]
	v.Type = t
	return v
}

func (d *fragmentReader) aggregate(a *plan.Aggregate) {
	a.Groups = d.exprs(0)
	n := d.r.Count(1)
	a.Aggs = make([]plan.AggCall, n)
	for i := 0; i < n && d.ok(); i++ {
		c := &a.Aggs[i]
		c.Func = d.text()
		c.Arg = d.optExpr(0)
		c.T = d.typ()
		c.Quantiles = make([]float64, d.r.Count(8))
		for j := range c.Quantiles {
			c.Quantiles[j] = d.r.F64()
		}
		if len(c.Quantiles) == 0 {
			c.Quantiles = nil
		}
		c.List = d.r.Bool()
		c.Written = d.text()
		c.Filter = d.optExpr(0)
		c.Args = d.exprs(0)
		if len(c.Args) == 0 {
			c.Args = nil
		}
		c.Sep = d.text()
		c.FromTop = d.r.Bool()
		c.Distinct = d.r.Bool()
		for k := d.r.Count(3); k > 0 && d.ok(); k-- {
			c.Order = append(c.Order, plan.SortKey{E: d.expr(0), Desc: d.r.Bool(), NullsFirst: d.r.Bool()})
		}
	}
	a.Cols = d.columns()
	a.Sets = d.lists()
	a.Groupings = d.lists()
}

func (d *fragmentReader) lists() [][]int {
	n := d.r.Count(1)
	if n == 0 {
		return nil
	}
	out := make([][]int, n)
	for i := range out {
		out[i] = make([]int, d.r.Count(1))
		for j := range out[i] {
			out[i][j] = d.index()
		}
	}
	return out
}

func (d *fragmentReader) columns() []plan.Column {
	out := make([]plan.Column, d.r.Count(5))
	for i := range out {
		out[i] = plan.Column{Name: d.text(), Type: d.typ(), Table: d.text(), Hidden: d.r.Bool(), Merged: d.r.Bool()}
	}
	return out
}

func (d *fragmentReader) node(depth int) plan.Node {
	if depth > maxDepth {
		d.fail("a plan fragment nested deeper than %d", maxDepth)
	}
	if !d.ok() {
		return &plan.Values{}
	}
	if len(d.r.B) == 0 {
		d.r.Fail("truncated")
		return &plan.Values{}
	}
	tag := d.r.B[0]
	d.r.B = d.r.B[1:]
	switch tag {
	case tagScan:
		s := &plan.Scan{Alias: d.text(), Cols: d.columns()}
		if d.r.Bool() {
			s.Required = make([]bool, len(s.Cols))
			for i := range s.Required {
				s.Required[i] = d.r.Bool()
			}
		}
		for n := d.r.Count(3); n > 0 && d.ok(); n-- {
			p := source.Predicate{Column: d.text(), Op: d.text()}
			for k := d.r.Count(2); k > 0 && d.ok(); k-- {
				p.Values = append(p.Values, d.constant())
			}
			s.Filters = append(s.Filters, p)
		}
		return s
	case tagFilter:
		cond := d.expr(0)
		return &plan.Filter{Cond: cond, Input: d.node(depth + 1)}
	case tagProject:
		p := &plan.Project{Exprs: d.exprs(0), Cols: d.columns()}
		p.Input = d.node(depth + 1)
		return p
	}
	d.fail("a plan fragment's node of unknown kind %d", tag)
	return &plan.Values{}
}

func (d *fragmentReader) exprs(depth int) []plan.Expr {
	n := d.r.Count(2)
	out := make([]plan.Expr, 0, n)
	for ; n > 0 && d.ok(); n-- {
		out = append(out, d.expr(depth))
	}
	return out
}

func (d *fragmentReader) optExpr(depth int) plan.Expr {
	if !d.r.Bool() {
		return nil
	}
	return d.expr(depth)
}

// expr reads one expression; what it returns after a failure is a stand-in.
func (d *fragmentReader) expr(depth int) plan.Expr {
	if depth > maxDepth {
		d.fail("a plan fragment nested deeper than %d", maxDepth)
	}
	if !d.ok() || len(d.r.B) == 0 {
		d.r.Fail("truncated")
		return &plan.Literal{V: types.NullOf(types.Null)}
	}
	tag := d.r.B[0]
	d.r.B = d.r.B[1:]
	switch tag {
	case tagColumn:
		return &plan.ColRef{Idx: d.index(), T: d.typ(), Name: d.text()}
	case tagConstant:
		return &plan.Literal{V: d.constant()}
	case tagCall:
		name, result := d.text(), d.typ()
		args := d.exprs(depth + 1)
		if !d.ok() {
			return &plan.Literal{V: types.NullOf(result)}
		}
		argTypes := make([]arrow.DataType, len(args))
		consts := make([]*types.Value, len(args))
		for i, a := range args {
			argTypes[i] = a.Type()
			if l, ok := a.(*plan.Literal); ok {
				consts[i] = &l.V
			}
		}
		fn, err := kernels.ResolveConst(name, argTypes, consts)
		if err == nil && !arrow.TypeEqual(fn.Result, result) {
			err = fmt.Errorf("it is %s, not %s", types.Name(fn.Result), types.Name(result))
		}
		if err != nil {
			d.fail("a plan fragment's call of %s cannot be resolved here: %v", name, err)
			return &plan.Literal{V: types.NullOf(result)}
		}
		return &plan.Call{Fn: fn, Args: args}
	case tagCast:
		to := d.typ()
		return &plan.Cast{To: to, E: d.expr(depth + 1)}
	case tagCase:
		c := &plan.Case{T: d.typ()}
		for n := d.r.Count(2); n > 0 && d.ok(); n-- {
			c.Whens = append(c.Whens, plan.When{Cond: d.expr(depth + 1), Then: d.expr(depth + 1)})
		}
		c.Else = d.expr(depth + 1)
		return c
	case tagInList:
		in := &plan.InList{Not: d.r.Bool()}
		in.E = d.expr(depth + 1)
		in.List = d.exprs(depth + 1)
		return in
	case tagUnused:
		return &plan.Unused{T: d.typ()}
	}
	d.fail("a plan fragment's expression of unknown kind %d", tag)
	return &plan.Literal{V: types.NullOf(types.Null)}
}
