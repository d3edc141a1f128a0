package kernels

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// The date and time functions beyond date_part, date_trunc and date_diff, added to
// the registry after functions.go's table is made (this file's init runs after
// that one's).

func init() {
	for name, b := range map[string]binder{
		"strptime":     bindStrptime(false),
		"try_strptime": bindStrptime(true),
	} {
		registry[name] = b
	}
	// isinf and isfinite of a number are the math functions' own.
	addTemporalOverload("isinf", bindInfTest(true))
	addTemporalOverload("isfinite", bindInfTest(false))
}

// addTemporalOverload makes name call b for a DATE or TIMESTAMP first argument and
// whatever name already was for any other.
func addTemporalOverload(name string, b binder) {
	prev := registry[name]
	registry[name] = func(c *call) (*Function, error) {
		if prev == nil || (len(c.args) > 0 && isDateLike(c.args[0])) {
			return b(c)
		}
		return prev(c)
	}
}

// constFormat compiles argument i as a strftime/strptime format, which must be a
// constant; ok is false when it is the NULL constant.
func (c *call) constFormat(i int) (tf *timeFormat, ok bool, err error) {
	if i < len(c.consts) && c.consts[i] != nil && c.consts[i].Null {
		return nil, false, nil
	}
	f, isConst := c.constString(i)
	if !isConst {
		return nil, false, errs.New(errs.Analysis, "%s: the format must be a constant", c.name)
	}
	tf, err = compileTimeFormat(c.name, f)
	return tf, err == nil, err
}

// bindStrftime binds strftime(x, format) (or strftime(format, x), which DuckDB also
// takes) → VARCHAR. An infinite value is rendered infinity or -infinity.
func bindStrftime(c *call) (*Function, error) {
	if len(c.args) != 2 {
		return nil, c.mismatch()
	}
	xi, fi := 0, 1
	if stringish(c.args[0]) && isDateLike(c.args[1]) {
		xi, fi = 1, 0
	}
	if !temporalish(c.args[xi]) || !stringish(c.args[fi]) {
		return nil, c.mismatch()
	}
	t := c.args[xi]
	if isNullType(t) {
		t = types.Timestamp
	}
	tf, ok, err := c.constFormat(fi)
	if err != nil {
		return nil, err
	}
	args := make([]arrow.DataType, 2)
	args[xi], args[fi] = t, types.String
	tz := t.ID() == arrow.TIMESTAMP && t.(*arrow.TimestampType).TimeZone != ""
	return newFunction(c, args, types.String, func(in []arrow.Array, n int) (arrow.Array, error) {
		if !ok {
			return nullArray(types.String, n), nil
		}
		r, _ := newTemporalReader(in[xi])
		var buf []byte
		return evalStrings(in, n, func(i int) (string, error) {
			if s := r.inf(i); s != 0 {
				return infName(s), nil
			}
			days, nanos := r.at(i)
			buf = tf.appendFormat(buf[:0], days, nanos, tz)
			return string(buf), nil
		})
	}, true), nil
}

func infName(sign int) string {
	if sign > 0 {
		return "infinity"
	}
	return "-infinity"
}

// bindStrptime binds strptime(text, format) → TIMESTAMP (WITH TIME ZONE when the
// format has %z); try_strptime gives NULL where strptime fails on a value.
func bindStrptime(try bool) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 2 || !stringish(c.args[0]) || !stringish(c.args[1]) {
			return nil, c.mismatch()
		}
		tf, ok, err := c.constFormat(1)
		if err != nil {
			return nil, err
		}
		res := types.Timestamp
		if ok && tf.zone {
			res = types.TimestampTZ
		}
		return newFunction(c, []arrow.DataType{types.String, types.String}, res, func(in []arrow.Array, n int) (arrow.Array, error) {
			if !ok {
				return nullArray(res, n), nil
			}
			s := str(in[0])
			z := newNullRows(n, in...)
			out := make([]int64, n)
			for i := 0; i < n; i++ {
				if !z.ok(i) {
					continue
				}
				v, err := tf.parse(s.Value(i))
				if err != nil {
					if try {
						z.set(i)
						continue
					}
					return nil, err
				}
				out[i] = v
			}
			return fixedArray(res, out, z.valid, z.nulls), nil
		}, true), nil
	}
}

// bindInfTest binds isinf(x) (want true) or isfinite(x) of a DATE or TIMESTAMP.
func bindInfTest(inf bool) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 1 || !temporalish(c.args[0]) {
			return nil, c.mismatch()
		}
		t := c.args[0]
		if isNullType(t) {
			t = types.Timestamp
		}
		return newFunction(c, []arrow.DataType{t}, types.Boolean, func(in []arrow.Array, n int) (arrow.Array, error) {
			r, _ := newTemporalReader(in[0])
			bits := make([]bool, n)
			for i := range bits {
				bits[i] = (r.inf(i) != 0) == inf
			}
			valid, nulls := andValidity(n, in...)
			return boolArray(packBools(bits), n, valid, nulls), nil
		}, true), nil
	}
}
