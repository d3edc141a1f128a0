package plan

// RecursiveCTE is a WITH RECURSIVE query: Anchor's rows, then Step's run over the
// rows the previous run added (Work) until a run adds none. With All false (UNION)
// a row equal to one already produced is dropped, so it is not run again.
type RecursiveCTE struct {
	Anchor, Step Node
	Work         *WorkTable
	All          bool
	Cols         []Column
}

// WorkTable is, inside a recursive query's Step, the rows the previous iteration
// added.
type WorkTable struct {
	Name string
	Cols []Column
}

func (n *RecursiveCTE) Columns() []Column { return n.Cols }
func (n *WorkTable) Columns() []Column    { return n.Cols }

// Inputs is none: the rules optimize Anchor and Step each on its own (Step reads the
// work table, which no rewrite may move past an iteration).
func (n *RecursiveCTE) Inputs() []Node { return nil }
func (n *WorkTable) Inputs() []Node    { return nil }
