//go:build cgo

package plan

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
	"github.com/loredb/lore/types"
)

// bindSeries binds range(…) and generate_series(…) in FROM: (stop), (start, stop)
// or (start, stop, step) of integers, or (start, stop, interval) of timestamps or
// dates, every argument a constant. The column is named after the function, as in
// DuckDB; generate_series includes its stop.
func (b *binder) bindSeries(name string, fc *pg.FuncCall, alias *pg.Alias) (Node, error) {
	pos := int(fc.Location)
	args := make([]*Literal, len(fc.Args))
	for i, a := range fc.Args {
		e, err := b.expr(a, &exprCtx{sc: newScope(nil), noAgg: true, noSubquery: true, clause: "table function arguments"})
		if err != nil {
			return nil, err
		}
		if u, ok := e.(*untypedString); ok {
			e = &u.Literal
		}
		l, ok := b.fold(settle(e)).(*Literal)
		if !ok {
			return nil, errs.At(errs.Analysis, location(a), "the arguments of %s must be constants", name)
		}
		args[i] = l
	}
	s := &Series{Inclusive: name == "generate_series", Step: 1}
	signature := func() error {
		ts := make([]string, len(args))
		for i, a := range args {
			ts[i] = types.Name(a.V.Type)
		}
		return errs.At(errs.Analysis, pos, "no function matches %s(%s): it takes (BIGINT), (BIGINT, BIGINT), (BIGINT, BIGINT, BIGINT) or (TIMESTAMP, TIMESTAMP, INTERVAL)",
			name, joinNames(ts))
	}
	isInt := func(l *Literal) bool { return types.IsInteger(l.V.Type) || l.V.Type.ID() == arrow.NULL }
	isTime := func(l *Literal) bool {
		id := l.V.Type.ID()
		return id == arrow.TIMESTAMP || id == arrow.DATE32 || id == arrow.NULL
	}
	for _, a := range args {
		if a.V.Null {
			s.Empty = true
		}
	}
	switch {
	case len(args) >= 1 && len(args) <= 3 && allOf(args, isInt):
		s.Col.Type = types.Int64
		vals := make([]int64, len(args))
		for i, a := range args {
			if a.V.Null {
				continue
			}
			if types.IsUnsigned(a.V.Type) {
				if a.V.U > 1<<63-1 {
					return nil, errs.At(errs.Analysis, pos, "%s: %d is out of range for BIGINT", name, a.V.U)
				}
				vals[i] = int64(a.V.U)
			} else {
				vals[i] = a.V.I
			}
		}
		switch len(vals) {
		case 1:
			s.Stop = vals[0]
		default:
			s.Start, s.Stop = vals[0], vals[1]
			if len(vals) == 3 {
				s.Step = vals[2]
			}
		}
		if s.Step == 0 && !s.Empty {
			return nil, errs.At(errs.Analysis, pos, "%s: the step cannot be 0", name)
		}
	case len(args) == 3 && isTime(args[0]) && isTime(args[1]) &&
		(args[2].V.Type.ID() == arrow.INTERVAL_MONTH_DAY_NANO || args[2].V.Type.ID() == arrow.NULL):
		s.Col.Type = types.Timestamp
		if args[0].V.Type.ID() == arrow.TIMESTAMP && args[1].V.Type.ID() == arrow.TIMESTAMP &&
			args[0].V.Type.(*arrow.TimestampType).TimeZone != "" && args[1].V.Type.(*arrow.TimestampType).TimeZone != "" {
			s.Col.Type = types.TimestampTZ
		}
		var err error
		if s.Start, err = micros(args[0]); err != nil {
			return nil, err
		}
		if s.Stop, err = micros(args[1]); err != nil {
			return nil, err
		}
		iv := args[2].V.Iv
		s.Interval = iv
		if s.Empty {
			break
		}
		pos, neg := iv.Months > 0 || iv.Days > 0 || iv.Nanoseconds > 0, iv.Months < 0 || iv.Days < 0 || iv.Nanoseconds < 0
		switch {
		case !pos && !neg:
			return nil, errs.At(errs.Analysis, int(fc.Location), "%s: the interval cannot be 0", name)
		case pos && neg:
			return nil, errs.At(errs.Analysis, int(fc.Location), "%s: an interval whose parts have mixed signs is not supported", name)
		case neg:
			s.Step = -1
		}
		if iv.Nanoseconds%1000 != 0 {
			return nil, errs.At(errs.Analysis, int(fc.Location), "%s: the interval must be a whole number of microseconds", name)
		}
	default:
		return nil, signature()
	}
	s.Col.Name, s.Col.Table = name, name
	cols := s.Columns()
	if alias != nil {
		var err error
		if cols, err = requalify(cols, alias, name); err != nil {
			return nil, err
		}
		s.Col = cols[0]
	}
	return s, nil
}

// micros is a DATE or TIMESTAMP literal in microseconds since the epoch.
func micros(l *Literal) (int64, error) {
	if l.V.Null {
		return 0, nil
	}
	if l.V.Type.ID() == arrow.DATE32 {
		return l.V.I * 86_400_000_000, nil
	}
	switch l.V.Type.(*arrow.TimestampType).Unit {
	case arrow.Second:
		return l.V.I * 1_000_000, nil
	case arrow.Millisecond:
		return l.V.I * 1000, nil
	case arrow.Nanosecond:
		return l.V.I / 1000, nil
	}
	return l.V.I, nil
}

func allOf(ls []*Literal, f func(*Literal) bool) bool {
	for _, l := range ls {
		if !f(l) {
			return false
		}
	}
	return true
}

func joinNames(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}
