package agg

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
)

// MultiArg is an Accumulator of an aggregate that reads several columns per row:
// a function of several arguments, or one with DISTINCT or ORDER BY inside the call
// (whose keys follow the arguments). Its Update takes the first column alone and
// is an error; UpdateArgs takes them all.
type MultiArg interface {
	Accumulator
	// UpdateArgs is Update with one array per argument (then per ORDER BY key), all
	// of one length; the selection and groups are read as Update reads them.
	UpdateArgs(args []arrow.Array, sel []int32, groups []uint32) error
}

// UpdateArgs folds rows into acc whatever the number of its arguments: one goes to
// Update, several to MultiArg.UpdateArgs.
func UpdateArgs(acc Accumulator, args []arrow.Array, sel []int32, groups []uint32) error {
	if m, ok := acc.(MultiArg); ok {
		return m.UpdateArgs(args, sel, groups)
	}
	if len(args) != 1 {
		return errs.New(errs.Internal, "BUG: %T given %d arguments", acc, len(args))
	}
	return acc.Update(args[0], sel, groups)
}

// Arity is the number of columns an Update of s reads: its arguments, then its
// ORDER BY keys.
func Arity(s Spec) int {
	n := 0
	if s.ArgType != nil {
		n = 1
	}
	return n + len(s.ArgTypes) + len(s.Order)
}

// needsArgs is the error of a MultiArg given one column through Update.
func needsArgs(s Spec) error {
	return errs.New(errs.Internal, "BUG: %s needs UpdateArgs", s)
}

// span is the rows an Update folds: n rows, row k being sel[k] (k when sel is nil)
// in group groups[k] (0 when groups is nil).
type span struct {
	n      int
	sel    []int32
	groups []uint32
}

func spanOf(arg arrow.Array, sel []int32, groups []uint32) span {
	n := len(groups)
	if groups == nil {
		if sel != nil {
			n = len(sel)
		} else if arg != nil {
			n = arg.Len()
		}
	}
	return span{n, sel, groups}
}

func (s span) row(k int) int {
	if s.sel == nil {
		return k
	}
	return int(s.sel[k])
}

func (s span) group(k int) uint32 {
	if s.groups == nil {
		return 0
	}
	return s.groups[k]
}

// plain decodes a dictionary argument, which the functions here read by row.
func plain(arr arrow.Array) arrow.Array {
	if arr == nil {
		return nil
	}
	return kernels.Decode(arr)
}
