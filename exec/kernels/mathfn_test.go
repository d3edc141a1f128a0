package kernels

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/loredb/lore/types"
)

func TestMathFunctions(t *testing.T) {
	f := mk(t, types.Float64, 2.5, -2.5, 0.0, nil, math.NaN())
	n := f.Len()
	cases := []struct {
		name string
		args []arrow.Array
		want string
		res  arrow.DataType
	}{
		{"abs", []arrow.Array{f}, "2.5,2.5,0.0,NULL,nan", types.Float64},
		{"round", []arrow.Array{f}, "3.0,-3.0,0.0,NULL,nan", types.Float64},
		{"floor", []arrow.Array{f}, "2.0,-3.0,0.0,NULL,nan", types.Float64},
		{"ceil", []arrow.Array{f}, "3.0,-2.0,0.0,NULL,nan", types.Float64},
		{"ceiling", []arrow.Array{f}, "3.0,-2.0,0.0,NULL,nan", types.Float64},
		{"sign", []arrow.Array{f}, "1,-1,0,NULL,0", types.Int8},
		{"round", []arrow.Array{mk(t, types.Float64, 1.2345, -1.2355, 1234.5), constInt(2, 3)}, "1.23,-1.24,1234.5", types.Float64},
		{"round", []arrow.Array{mk(t, types.Float64, 1234.5), constInt(-2, 1)}, "1200.0", types.Float64},
		{"abs", []arrow.Array{mk(t, types.Int32, -3, 4, nil)}, "3,4,NULL", types.Int32},
		{"round", []arrow.Array{mk(t, types.Int32, -3, 4)}, "-3,4", types.Int32},
		{"round", []arrow.Array{mk(t, types.Int64, 1250, -1250, 1249), constInt(-2, 3)}, "1300,-1300,1200", types.Int64},
		{"floor", []arrow.Array{mk(t, types.Int16, 7)}, "7.0", types.Float64},
		{"abs", []arrow.Array{mk(t, dec(5, 2), "-1.25")}, "1.25", dec(5, 2)},
		{"round", []arrow.Array{mk(t, dec(5, 2), "1.50", "-1.50", "1.49", nil)}, "2,-2,1,NULL", dec(5, 0)},
		{"floor", []arrow.Array{mk(t, dec(5, 2), "1.50", "-1.50", "-1.00")}, "1,-2,-1", dec(5, 0)},
		{"ceil", []arrow.Array{mk(t, dec(5, 2), "1.50", "-1.50", "1.00")}, "2,-1,1", dec(5, 0)},
		{"round", []arrow.Array{mk(t, dec(10, 4), "1.2345", "-1.2355", "999.9999"), constInt(2, 3)}, "1.2300,-1.2400,1000.0000", dec(10, 4)},
		{"round", []arrow.Array{mk(t, dec(10, 2), "1250.00"), constInt(-2, 1)}, "1300.00", dec(10, 2)},
		{"trunc", []arrow.Array{mk(t, dec(5, 2), "1.57", "-1.57", nil)}, "1,-1,NULL", dec(5, 0)},
		{"trunc", []arrow.Array{mk(t, types.Float64, 2.9, -2.9)}, "2.0,-2.0", types.Float64},
		{"trunc", []arrow.Array{mk(t, types.Int32, 19, -19), constInt(-1, 2)}, "10,-10", types.Int32},
		{"even", []arrow.Array{mk(t, types.Float64, 2.5, -1.5, 2, 0)}, "4.0,-2.0,2.0,0.0", types.Float64},
		{"round_even", []arrow.Array{mk(t, types.Float64, 2.5, 3.5, -2.5), constInt(0, 3)}, "2.0,4.0,-2.0", types.Float64},
		{"sqrt", []arrow.Array{mk(t, types.Int32, 16, nil)}, "4.0,NULL", types.Float64},
		{"power", []arrow.Array{mk(t, types.Int64, 2), mk(t, types.Float64, 10)}, "1024.0", types.Float64},
		{"pow", []arrow.Array{mk(t, types.Float64, 4), mk(t, types.Float64, 0.5)}, "2.0", types.Float64},
		{"ln", []arrow.Array{mk(t, types.Float64, math.E)}, "1.0", types.Float64},
		{"log10", []arrow.Array{mk(t, types.Int64, 1000)}, "3.0", types.Float64},
		{"exp", []arrow.Array{mk(t, types.Float64, 0)}, "1.0", types.Float64},
		{"sign", []arrow.Array{mk(t, dec(5, 2), "-0.01", "0")}, "-1,0", types.Int8},
		{"mod", []arrow.Array{mk(t, types.Int64, -7), mk(t, types.Int64, 3)}, "-1", types.Int64},
		{"greatest", []arrow.Array{mk(t, types.Int32, 1), mk(t, types.Float64, 1.5)}, "1.5", types.Float64},
	}
	_ = n
	for _, c := range cases {
		out, fn, err := evalCall(t, c.name, c.args...)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if joined(out) != c.want || !arrow.TypeEqual(fn.Result, c.res) {
			t.Errorf("%s(%s) = %s of %s, want %s of %s", c.name, joinedArgs(c.args), joined(out), types.Name(fn.Result), c.want, types.Name(c.res))
		}
	}
	wantErr(t, "sqrt", "negative", mk(t, types.Float64, -1))
	wantErr(t, "ln", "zero", mk(t, types.Float64, 0))
	wantErr(t, "abs", "out of range", mk(t, types.Int64, math.MinInt64))
	wantErr(t, "abs", "no function matches abs(VARCHAR)", mk(t, types.String, "x"))
}
