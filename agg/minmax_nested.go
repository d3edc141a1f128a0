package agg

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/exec/kernels"
)

// mmNested is MIN/MAX of lists, structs and maps: the values are folded as their
// order-preserving encodings (kernels.NestedKeys), byte strings whose order is
// DuckDB's order of the values, and the winners are decoded back at the end.
type mmNested struct {
	mmString
	nested arrow.DataType
}

func newMinMaxNested(s Spec, dt arrow.DataType, isMax bool) *mmNested {
	return &mmNested{mmString: mmString{spec: s, dt: arrow.BinaryTypes.Binary, isMax: isMax}, nested: dt}
}

func (a *mmNested) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	if !arrow.TypeEqual(arg.DataType(), a.nested) {
		return typeMismatch(a.spec, arg)
	}
	return a.mmString.Update(kernels.NestedKeys(arg), sel, groups)
}

func (a *mmNested) Merge(other Accumulator, mapping []uint32) error {
	o, err := otherAs[*mmNested](other, a.spec)
	if err != nil {
		return err
	}
	return a.mmString.Merge(&o.mmString, mapping)
}

func (a *mmNested) Final() (arrow.Array, error) {
	keys, err := a.mmString.Final()
	if err != nil {
		return nil, err
	}
	return kernels.DecodeNestedKeys(a.nested, keys.(*array.Binary)), nil
}

// FromZone is false: zones keep no bounds of nested columns.
func (a *mmNested) FromZone(*Zone, uint32) (bool, error) { return false, nil }
