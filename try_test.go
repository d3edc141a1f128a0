package lore_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/types"
)

// TRY turns an error of the data into NULL for the rows it comes from, and lets an
// error of the statement's resources through.
func TestTryCatchesOnlyDataErrors(t *testing.T) {
	kernels.Register("test_try_fail", []arrow.DataType{types.Float64}, types.Float64, func(in []arrow.Array, n int) (arrow.Array, error) {
		x := in[0].(*array.Float64)
		for i := 0; i < n; i++ {
			switch {
			case x.IsNull(i):
			case x.Value(i) == 2:
				return nil, errs.New(errs.ResourceExhausted, "row needs too much memory")
			case x.Value(i) == 3:
				return nil, errs.New(errs.Analysis, "row has bad data")
			}
		}
		return in[0], nil
	})
	e := open(t, lore.Options{})
	res := query(t, e, "SELECT try(test_try_fail(x)) FROM (VALUES (1.0::DOUBLE), (3.0), (4.0)) t(x)")
	var got []string
	for r := 0; r < 3; r++ {
		got = append(got, cell(res, r, 0))
	}
	if want := []string{"1.0", "NULL", "4.0"}; got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("TRY over a failing row: %v, want %v", got, want)
	}
	_, err := e.Query(context.Background(), "SELECT try(test_try_fail(x)) FROM (VALUES (1.0::DOUBLE), (2.0)) t(x)", nil)
	if errs.CodeOf(err) != errs.ResourceExhausted {
		t.Errorf("TRY over a resource error: %v, want RESOURCE_EXHAUSTED", err)
	}
}
