package kernels

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/lend"
	"github.com/loredb/lore/types"
)

// Function is a resolved scalar function: argument types after coercion, result
// type, and the kernel.
//
// Eval takes arrays of n rows (the batch's physical rows) and returns a new array
// of n rows. The caller casts argument i to Args[i] first; an argument that differs
// only by dictionary encoding needs no cast (kernels accept dictionary arrays and
// run once per dictionary value where they can), and an argument of another type
// is cast by Eval itself as a safety net. A result may be a dictionary array whose
// value type is Result (string functions over a dictionary column keep it encoded).
// Eval keeps no state between calls and may be called from several goroutines.
type Function struct {
	Name   string
	Args   []arrow.DataType
	Result arrow.DataType
	Eval   func(args []arrow.Array, n int) (arrow.Array, error)
	// EvalSized, set for a function whose result can be far larger than its
	// arguments (lpad, rpad, replace), is Eval that first tells reserve the bytes the
	// result will take, before making it; an error from reserve fails the call.
	EvalSized func(args []arrow.Array, n int, reserve func(bytes int64) error) (arrow.Array, error)
	// EvalInto, set for arithmetic, is Eval that takes the values of its result from
	// s: for a caller to whom the result is dead once the batch is done (see Scratch).
	EvalInto func(args []arrow.Array, n int, s *Scratch) (arrow.Array, error)
}

// A Scratch lends the values of kernel results that die with their batch: an
// aggregate that keeps nothing of its input evaluates a batch's arguments through
// one, folds them in, and Resets it, and the next batch's results reuse the memory.
// Lent values are not cleared; a kernel writes every row of them, NULL rows too. It
// is not safe for concurrent use: one per worker.
type Scratch struct{ pool lend.Pool }

// Reset takes back everything lent: no result made through s may be used after.
func (s *Scratch) Reset() { s.pool.Return(nil) }

// scratchValues lends n values from s, or allocates them when s is nil.
func scratchValues[V any](s *Scratch, n int) []V {
	if s == nil {
		return make([]V, n)
	}
	return lend.Values[V](&s.pool, n)
}

// scratchKernel is a kernel whose result's values come from a Scratch (nil: new).
type scratchKernel func(args []arrow.Array, n int, s *Scratch) (arrow.Array, error)

// newScratchFunction is newFunction for a kernel that can take its result's values
// from a Scratch: Eval allocates them, EvalInto lends them.
func newScratchFunction(c *call, args []arrow.DataType, result arrow.DataType, k scratchKernel, strict bool) *Function {
	f := newFunction(c, args, result, func(in []arrow.Array, n int) (arrow.Array, error) { return k(in, n, nil) }, strict)
	f.EvalInto = func(in []arrow.Array, n int, s *Scratch) (arrow.Array, error) {
		return evalKernel(c.name, args, result, strict, in, n, func(in []arrow.Array, n int) (arrow.Array, error) { return k(in, n, s) })
	}
	return f
}

// kernel is an evaluation over arrays of exactly the declared types (no
// dictionaries, canonical strings).
type kernel func(args []arrow.Array, n int) (arrow.Array, error)

// call is a function call being resolved.
type call struct {
	name   string
	args   []arrow.DataType // unwrapped, canonical
	consts []*types.Value   // values of constant arguments, nil when unknown
}

// binder resolves one function name for a call, or fails.
type binder func(c *call) (*Function, error)

var registry map[string]binder

var ctxBackground = context.Background()

// Resolve finds a function or operator by name (lower case) for the given argument
// types, choosing the implicit coercions: INTEGER + DOUBLE is DOUBLE + DOUBLE,
// INTEGER = BIGINT compares as BIGINT, DATE < TIMESTAMP as TIMESTAMP, an untyped
// NULL argument takes whatever type the other arguments need. A call that matches
// nothing is an ANALYSIS_ERROR such as "no function matches lower(INTEGER)" or
// "operator does not exist: VARCHAR + INTEGER".
//
// Integer arithmetic is done in BIGINT (UBIGINT when both sides are unsigned):
// INTEGER + INTEGER is BIGINT here where DuckDB keeps INTEGER; the values printed
// are the same and overflow is detected at 64 bits.
func Resolve(name string, args []arrow.DataType) (*Function, error) {
	return ResolveConst(name, args, nil)
}

// Known reports whether name (any case) is a scalar function or operator that
// Resolve knows, whatever its arguments; aggregates and window functions are not.
func Known(name string) bool {
	_, ok := registry[strings.ToLower(name)]
	return ok
}

// ResolveConst is Resolve when the caller knows the values of some arguments
// (consts[i] non-nil for a constant argument i; consts may be nil or shorter than
// args). A few result types depend on a constant the way DuckDB's do:
// date_part('epoch', x) is a DOUBLE.
func ResolveConst(name string, args []arrow.DataType, consts []*types.Value) (*Function, error) {
	b, ok := registry[strings.ToLower(name)]
	if !ok {
		return nil, errs.New(errs.Analysis, "function %s does not exist", name)
	}
	c := &call{name: strings.ToLower(name), args: make([]arrow.DataType, len(args)), consts: make([]*types.Value, len(args))}
	for i, a := range args {
		if a == nil {
			a = types.Null
		}
		c.args[i] = canonical(types.Unwrap(a))
		if i < len(consts) {
			c.consts[i] = consts[i]
		}
	}
	f, err := b(c)
	if err != nil {
		return nil, err
	}
	return narrowResult(f), nil
}

// constString is the value of constant argument i when it is a non-NULL string.
func (c *call) constString(i int) (string, bool) {
	if i >= len(c.consts) || c.consts[i] == nil || c.consts[i].Null {
		return "", false
	}
	return c.consts[i].S, true
}

func (c *call) mismatch() error {
	names := make([]string, len(c.args))
	for i, a := range c.args {
		names[i] = types.Name(a)
	}
	if isOperatorName(c.name) {
		if len(names) == 1 {
			op := c.name
			if op == "neg" {
				op = "-"
			}
			return errs.New(errs.Analysis, "operator does not exist: %s%s", op, names[0])
		}
		if len(names) == 2 {
			return errs.New(errs.Analysis, "operator does not exist: %s %s %s", names[0], strings.ToUpper(c.name), names[1])
		}
	}
	return errs.New(errs.Analysis, "no function matches %s(%s)", c.name, strings.Join(names, ", "))
}

func isOperatorName(n string) bool {
	switch n {
	case "+", "-", "*", "/", "//", "%", "neg", "=", "==", "<>", "!=", "<", "<=", ">", ">=", "||",
		"and", "or", "not", "like", "not_like", "ilike", "not_ilike":
		return true
	}
	return false
}

// newFunction wraps a kernel into a Function. strict kernels (NULL in, NULL out,
// no other effect of NULL) are run once per dictionary value when exactly one
// argument is a dictionary and the others are constant.
func newFunction(c *call, args []arrow.DataType, result arrow.DataType, k kernel, strict bool) *Function {
	f := &Function{Name: c.name, Args: args, Result: result}
	f.Eval = func(in []arrow.Array, n int) (arrow.Array, error) {
		return evalKernel(c.name, args, result, strict, in, n, k)
	}
	return f
}

// evalKernel runs k over in: cast to the declared types, once per dictionary value
// where it can (see newFunction), over decoded arrays otherwise.
func evalKernel(name string, args []arrow.DataType, result arrow.DataType, strict bool, in []arrow.Array, n int, k kernel) (arrow.Array, error) {
	if len(in) != len(args) {
		return nil, errs.New(errs.Internal, "%s: %d arguments given, %d expected", name, len(in), len(args))
	}
	in, err := conform(in, args)
	if err != nil {
		return nil, err
	}
	if out, ok, err := evalDictionary(in, n, result, k, strict); ok || err != nil {
		return out, err
	}
	plain := make([]arrow.Array, len(in))
	for i, a := range in {
		plain[i] = Decode(a)
	}
	return k(plain, n)
}

// sizedKernel is a kernel that tells reserve (when not nil) the bytes of its result
// before making it.
type sizedKernel func(args []arrow.Array, n int, reserve func(int64) error) (arrow.Array, error)

// bindSized is bindSig for a sized kernel: Eval runs it without a reserve, EvalSized
// with the caller's.
func bindSized(sig []argClass, result arrow.DataType, k sizedKernel) binder {
	plain := bindSig(sig, result, func(args []arrow.Array, n int) (arrow.Array, error) { return k(args, n, nil) })
	return func(c *call) (*Function, error) {
		f, err := plain(c)
		if err != nil {
			return nil, err
		}
		f.EvalSized = func(in []arrow.Array, n int, reserve func(int64) error) (arrow.Array, error) {
			g := newFunction(c, f.Args, result, func(args []arrow.Array, n int) (arrow.Array, error) { return k(args, n, reserve) }, true)
			return g.Eval(in, n)
		}
		return f, nil
	}
}

// maxStringData is the most bytes one string array may hold: its offsets are 32-bit.
const maxStringData = math.MaxInt32

// reserveStrings checks the bytes a string result of n rows will take and tells
// reserve, when there is one.
func reserveStrings(name string, n int, bytes int64, reserve func(int64) error) error {
	if bytes > maxStringData {
		return errs.New(errs.ResourceExhausted, "%s would make %d bytes of strings for %d rows, more than one batch can hold (%d)", name, bytes, n, int64(maxStringData))
	}
	if reserve == nil {
		return nil
	}
	return reserve(bytes + 4*int64(n+1))
}

// conform casts arguments that are not (dictionaries of) their declared types.
func conform(in []arrow.Array, want []arrow.DataType) ([]arrow.Array, error) {
	var out []arrow.Array
	for i, a := range in {
		if arrow.TypeEqual(types.Unwrap(a.DataType()), want[i]) {
			continue
		}
		if out == nil {
			out = append([]arrow.Array(nil), in...)
		}
		c, err := Cast(a, want[i])
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	if out == nil {
		return in, nil
	}
	return out, nil
}

// evalDictionary runs a strict kernel once per dictionary value. ok is false when
// the arguments do not allow it (no dictionary, several, a non-constant other
// argument, or a dictionary larger than the batch).
func evalDictionary(in []arrow.Array, n int, result arrow.DataType, k kernel, strict bool) (arrow.Array, bool, error) {
	di := -1
	for i, a := range in {
		if _, ok := a.(*array.Dictionary); ok {
			if di >= 0 {
				return nil, false, nil
			}
			di = i
		}
	}
	if di < 0 || !strict || n == 0 {
		return nil, false, nil
	}
	d := in[di].(*array.Dictionary)
	dl := d.Dictionary().Len()
	if dl == 0 || dl > n {
		return nil, false, nil
	}
	for i, a := range in {
		if i != di && !constantValue(a) {
			return nil, false, nil
		}
	}
	sub := make([]arrow.Array, len(in))
	for i, a := range in {
		if i == di {
			sub[i] = d.Dictionary()
		} else {
			sub[i] = array.NewSlice(a, 0, int64(dl))
		}
	}
	res, err := k(sub, dl)
	if err != nil {
		// The dictionary may hold values no row of the batch has (those of rows a
		// filter dropped): an error there is not the statement's. The rows are
		// evaluated one by one instead, and fail only on a value they hold.
		return nil, false, nil
	}
	switch r := res.(type) {
	case *array.Boolean:
		return gatherBool(r, d.Indices()), true, nil
	case *array.String:
		it := d.DataType().(*arrow.DictionaryType).IndexType
		return array.NewDictionaryArray(&arrow.DictionaryType{IndexType: it, ValueType: r.DataType()}, d.Indices(), r), true, nil
	}
	out, err := compute.TakeArray(ctxBackground, res, d.Indices())
	if err != nil {
		return nil, true, fmt.Errorf("cannot map %s over dictionary: %w", result, err)
	}
	return out, true, nil
}

// --- argument classes ---

func isNullType(dt arrow.DataType) bool  { return dt.ID() == arrow.NULL }
func stringish(dt arrow.DataType) bool   { return isNullType(dt) || types.IsString(dt) }
func intish(dt arrow.DataType) bool      { return isNullType(dt) || types.IsInteger(dt) }
func numericish(dt arrow.DataType) bool  { return isNullType(dt) || types.IsNumeric(dt) }
func temporalish(dt arrow.DataType) bool { return isNullType(dt) || isDateLike(dt) }
func isInterval(dt arrow.DataType) bool  { return dt.ID() == arrow.INTERVAL_MONTH_DAY_NANO }

func repeatType(dt arrow.DataType, n int) []arrow.DataType {
	out := make([]arrow.DataType, n)
	for i := range out {
		out[i] = dt
	}
	return out
}

// commonOf folds CommonType over all argument types.
func commonOf(ts []arrow.DataType) (arrow.DataType, bool) {
	ct := arrow.DataType(types.Null)
	for _, t := range ts {
		var ok bool
		if ct, ok = commonType(ct, t); !ok {
			return nil, false
		}
	}
	return ct, true
}
