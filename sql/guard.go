package sql

import (
	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
)

// MaxNestingDepth bounds the estimated depth of a statement's tree.
//
// Why: PostgreSQL's grammar builds left-associative chains (1+1+1…, x::t::t…, a UNION
// b UNION c…, a JOIN b JOIN c…) without growing its own stack, and pg_query then
// walks the resulting tree recursively in C. A chain of a few tens of thousands of
// links overflows a thread stack and kills the process (observed: ~6,000 links of
// 1+1+… with 2 MiB stacks, ~25,000 with 8 MiB). Right-nested constructs are already
// bounded by the grammar's own stack limit ("memory exhausted"). The estimate below
// is an upper bound of the depth of chains, computed from tokens before the C parser
// runs.
//
// A link of a UNION, INTERSECT or EXCEPT chain costs the C parser less than half
// the stack of a link of 1+1+… (observed with 2 MiB stacks: a flat UNION ALL of
// 10,000 branches parses, one of 15,000 does not; 1+1+… fails at 6,000), so
// setOpsPerLevel of them count as one level: a flat UNION ALL of up to 9,000
// branches is accepted.
const MaxNestingDepth = 3000

// setOpsPerLevel is how many links of a set operation chain count as one level of
// MaxNestingDepth.
const setOpsPerLevel = 3

// depthFrame is one bracket level (parentheses, brackets, CASE … END) of the
// estimate.
type depthFrame struct {
	open     token
	closer   pg.Token // the token that closes this level
	cur      int      // chain links in the current operand (reset at , AND OR WHEN THEN ELSE)
	maxChild int      // deepest bracket level inside the current operand
	best     int      // deepest finished operand of this level
	joins    int      // JOINs at this level: they chain across operands
	setops   int      // UNION/INTERSECT/EXCEPT at this level: they chain across operands
}

func (f *depthFrame) depth() int {
	return max(f.best, f.cur+f.maxChild) + f.joins + (f.setops+setOpsPerLevel-1)/setOpsPerLevel
}

// checkDepth refuses a statement whose estimated tree depth exceeds MaxNestingDepth.
//
// The estimate counts, per operand, every token that is not a name, a constant or a
// separator — each can add at most one level to a chain — and adds the depth of the
// deepest bracketed level inside. AND and OR do not count: PostgreSQL flattens their
// chains into one node. Counting keywords too over-estimates a little, which is the
// safe direction.
func checkDepth(text string, toks []token) error {
	stack := []depthFrame{{open: toks[0]}}
	pop := func() error {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		d := f.depth() + 1
		if d > MaxNestingDepth {
			return tooDeep(f.open)
		}
		top := &stack[len(stack)-1]
		top.maxChild = max(top.maxChild, d)
		return nil
	}
	for _, t := range toks {
		top := &stack[len(stack)-1]
		switch {
		case t.kind == tokLParen:
			stack = append(stack, depthFrame{open: t, closer: tokRParen})
		case t.kind == tokLBracket:
			stack = append(stack, depthFrame{open: t, closer: tokRBracket})
		case t.kind == pg.Token_CASE:
			stack = append(stack, depthFrame{open: t, closer: pg.Token_END_P})
		case len(stack) > 1 && t.kind == top.closer:
			if err := pop(); err != nil {
				return err
			}
		case t.kind == tokComma || t.kind == pg.Token_AND || t.kind == pg.Token_OR ||
			t.kind == pg.Token_WHEN || t.kind == pg.Token_THEN || t.kind == pg.Token_ELSE:
			top.best = max(top.best, top.cur+top.maxChild)
			top.cur, top.maxChild = 0, 0
		case t.kind == pg.Token_UNION || t.kind == pg.Token_INTERSECT || t.kind == pg.Token_EXCEPT:
			// Each side of a set operation is a query of its own: the chain adds a
			// level, and the words of the queries before it add none.
			top.best = max(top.best, top.cur+top.maxChild)
			top.cur, top.maxChild = 0, 0
			top.setops++
		case t.kind == pg.Token_JOIN:
			top.joins++
		case isLeaf(t):
		default:
			top.cur++
		}
		if top := &stack[len(stack)-1]; top.depth() > MaxNestingDepth {
			return tooDeep(top.open)
		}
	}
	for len(stack) > 1 {
		if err := pop(); err != nil {
			return err
		}
	}
	if stack[0].depth() > MaxNestingDepth {
		return tooDeep(stack[0].open)
	}
	return nil
}

// isLeaf reports whether t is a name or a constant: tokens that never add a level.
func isLeaf(t token) bool {
	switch t.kind {
	case pg.Token_IDENT, pg.Token_UIDENT, pg.Token_SCONST, pg.Token_USCONST, pg.Token_BCONST,
		pg.Token_XCONST, pg.Token_ICONST, pg.Token_FCONST, pg.Token_PARAM, tokDot,
		tokRParen, tokRBracket:
		return true
	}
	return false
}

func tooDeep(at token) error {
	return errs.At(errs.Syntax, at.start, "statement is nested too deeply (more than %d levels)", MaxNestingDepth)
}
