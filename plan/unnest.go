package plan

// Unnest repeats each input row once per element of its lists: the columns at
// positions Lists (lists, or NULL-typed) become their elements, the others are
// repeated. Lists of one row unnest in lockstep: the longest sets the row's count
// and the shorter are padded with NULL; a row whose lists are all empty or NULL
// yields no rows. Cols are the input's columns with the listed ones retyped.
type Unnest struct {
	Input Node
	Lists []int
	// Ordinal, when set for a list, makes its column the 1-based position of each
	// element (a BIGINT; NULL where the list is padded) instead of the element:
	// generate_subscripts and WITH ORDINALITY.
	Ordinal []bool
	Cols    []Column
}

func (n *Unnest) Columns() []Column { return n.Cols }
func (n *Unnest) Inputs() []Node    { return []Node{n.Input} }
