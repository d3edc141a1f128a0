package plan

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"strings"

	"github.com/loredb/lore/errs"
)

// scope is the set of columns an expression may name: the output columns of the
// node being bound over, each with its qualifier. hidden columns (join-produced
// subquery results, the right side of USING) are not expanded by *.
type scope struct {
	cols   []Column
	hidden []bool
	outer  *scope
}

// OuterRef is a reference, inside a subquery, to column Idx of the enclosing query's
// input. The binder removes every OuterRef when it decorrelates the subquery.
type OuterRef struct {
	Idx   int
	Col   Column
	scope *scope
}

func (e *OuterRef) Type() arrow.DataType { return e.Col.Type }
func (e *OuterRef) Children() []Expr     { return nil }
func (e *OuterRef) String() string       { return fmt.Sprintf("outer#%d", e.Idx) }

func newScope(cols []Column) *scope {
	s := &scope{cols: cols, hidden: make([]bool, len(cols))}
	for i, c := range cols {
		s.hidden[i] = c.Hidden
	}
	return s
}

// resolve finds a column by optional qualifier and name. It returns the index, or an
// ANALYSIS_ERROR when the name is unknown or ambiguous.
func (s *scope) resolve(qual, name string, pos int) (int, error) {
	found := -1
	for i, c := range s.cols {
		if !strings.EqualFold(c.Name, name) {
			continue
		}
		if qual != "" && !strings.EqualFold(c.Table, qual) {
			continue
		}
		if found >= 0 {
			if s.hidden[found] && !s.hidden[i] {
				found = i
				continue
			}
			if s.hidden[i] {
				continue
			}
			return -1, errs.At(errs.Analysis, pos, "column reference %q is ambiguous", name)
		}
		found = i
	}
	if found < 0 {
		if qual != "" {
			return -1, errs.At(errs.Analysis, pos, "column %q not found", qual+"."+name)
		}
		return -1, errs.At(errs.Analysis, pos, "column %q not found", name)
	}
	return found, nil
}

func (s *scope) hasTable(qual string) bool {
	for _, c := range s.cols {
		if strings.EqualFold(c.Table, qual) {
			return true
		}
	}
	return false
}

func (s *scope) String() string {
	names := make([]string, len(s.cols))
	for i, c := range s.cols {
		names[i] = fmt.Sprintf("%s.%s", c.Table, c.Name)
	}
	return strings.Join(names, ", ")
}
