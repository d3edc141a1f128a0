package sql

import (
	pg "github.com/loredb/lore/sql/pgast"
)

// Statement is one statement of a request. Every implementation records where it sits
// in the text it was parsed from, so later stages can point errors at it.
type Statement interface {
	// Span is the byte range [start, end) of the statement in the original text,
	// from its first token to the end of its last token (comments and the
	// terminating semicolon excluded).
	Span() (start, end int)
}

// Query is a SELECT (or VALUES, TABLE, WITH … SELECT, a set operation), possibly
// under EXPLAIN [ANALYZE].
type Query struct {
	Start, End int
	Explain    bool // EXPLAIN
	Analyze    bool // EXPLAIN ANALYZE
	// Select is the statement's tree. Every Location in it is a byte offset into the
	// original text of the whole request, not into Text.
	Select *pg.SelectStmt
	// Text is the original text of the statement, text[Start:End].
	Text string
	// Paths holds the byte offsets of the string literals written directly after
	// FROM or JOIN (`FROM 'data/*.parquet'`). Each became a RangeVar whose Location is
	// that offset and whose Relname is the literal's value: the binder reads such a
	// RangeVar as a path, not as a table name. Nil when there are none.
	Paths map[int]bool
	// Dialect holds the DuckDB forms read around PostgreSQL's grammar (GROUP BY ALL,
	// QUALIFY, * EXCLUDE, UNION BY NAME, …); nil when there are none.
	Dialect *Dialect
	// IgnoreNulls holds the byte offsets of the function calls written with IGNORE
	// NULLS in their argument list (`lag(x IGNORE NULLS)`), words the grammar does
	// not know and that were blanked: each is its FuncCall's Location. Nil when there
	// are none.
	IgnoreNulls map[int]bool
	// TryCasts holds the Locations of the TypeCast nodes written TRY_CAST(x AS t): the
	// cast gives NULL where the value does not convert. Nil when there are none.
	TryCasts map[int]bool
	// TimeTravel holds the version clauses (VERSION AS OF, TIMESTAMP AS OF) by the
	// Location of the RangeVar of the table they follow.
	TimeTravel map[int]TimeTravel
	// NoColumnsCall is set when the text has no word COLUMNS before a parenthesis:
	// no select item calls COLUMNS(…), and the binder need not look for one.
	NoColumnsCall bool

	digest []byte // the tree's encoding when cached, under tests (CheckUnchanged)
}

// CreateTable is CREATE TABLE [IF NOT EXISTS] name WITH (key = value, …).
type CreateTable struct {
	Start, End  int
	Name        string
	IfNotExists bool
	Options     []Option
}

// DropTable is DROP TABLE [IF EXISTS] name.
type DropTable struct {
	Start, End int
	Name       string
	IfExists   bool
}

// AlterTable is ALTER TABLE name SET CLUSTERED BY (…) or SET BLOOM (…). Exactly one
// of ClusteredBy and Bloom is non-nil; an empty list (SET CLUSTERED BY ()) is a
// non-nil pointer to an empty slice.
type AlterTable struct {
	Start, End  int
	Name        string
	ClusteredBy *[]string
	Bloom       *[]string
}

// ShowTables is SHOW TABLES.
type ShowTables struct{ Start, End int }

// Describe is DESCRIBE name (or DESC name).
type Describe struct {
	Start, End int
	Name       string
}

// ShowCreateTable is SHOW CREATE TABLE name.
type ShowCreateTable struct {
	Start, End int
	Name       string
}

// Analyze is ANALYZE name [WITH (key = value, …)].
type Analyze struct {
	Start, End int
	Name       string
	Options    []Option
}

// ShowStats is SHOW STATS FOR name.
type ShowStats struct {
	Start, End int
	Name       string
}

// DescribeDetail is DESCRIBE DETAIL name (or DESC DETAIL name).
type DescribeDetail struct {
	Start, End int
	Name       string
}

// Optimize is OPTIMIZE name [WITH (key = value, …)] [WHERE predicate].
type Optimize struct {
	Start, End int
	Name       string
	Options    []Option
	// Where is the predicate's original text and WhereStart its byte offset in the
	// request; "" and 0 when there is no WHERE.
	Where      string
	WhereStart int
	// WhereExpr is the parsed predicate, nil when there is no WHERE. Its Locations
	// are byte offsets into the original text of the whole request.
	WhereExpr *pg.Node
}

// SetSession is SET SESSION key = value (or key TO value).
type SetSession struct {
	Start, End int
	Key        string
	Value      OptionValue
}

// Option is one `key = value` of a WITH (…) list. Keys are lower-cased; validating
// them is the planner's business.
type Option struct {
	Key    string
	KeyPos int
	Value  OptionValue
}

// ValueKind says which field of an OptionValue holds the value.
type ValueKind int

// The kinds of OptionValue.
const (
	ValueString ValueKind = iota // a single-quoted or dollar-quoted string
	ValueBool                    // true or false
	ValueInt                     // an integer that fits int64
	ValueFloat                   // any other number
	ValueArray                   // ARRAY[literal, …]
	ValueIdent                   // a bare word such as auto (or a double-quoted one)
)

func (k ValueKind) String() string {
	switch k {
	case ValueString:
		return "string"
	case ValueBool:
		return "boolean"
	case ValueInt:
		return "integer"
	case ValueFloat:
		return "number"
	case ValueArray:
		return "array"
	case ValueIdent:
		return "word"
	default:
		return "unknown"
	}
}

// OptionValue is a literal value of an option or a session setting. Kind says which
// one field holds it.
type OptionValue struct {
	Pos   int // byte offset of the value in the original text
	Kind  ValueKind
	Str   string // ValueString: the unquoted text; ValueIdent: the word, lower-cased unless double-quoted
	Bool  bool
	Int   int64
	Float float64
	Array []OptionValue // ValueArray: the elements, each a literal (never an array or a word)
}

// Span implementations.

func (s *Query) Span() (int, int)           { return s.Start, s.End }
func (s *CreateTable) Span() (int, int)     { return s.Start, s.End }
func (s *DropTable) Span() (int, int)       { return s.Start, s.End }
func (s *AlterTable) Span() (int, int)      { return s.Start, s.End }
func (s *ShowTables) Span() (int, int)      { return s.Start, s.End }
func (s *Describe) Span() (int, int)        { return s.Start, s.End }
func (s *ShowCreateTable) Span() (int, int) { return s.Start, s.End }
func (s *Analyze) Span() (int, int)         { return s.Start, s.End }
func (s *ShowStats) Span() (int, int)       { return s.Start, s.End }
func (s *DescribeDetail) Span() (int, int)  { return s.Start, s.End }
func (s *Optimize) Span() (int, int)        { return s.Start, s.End }
func (s *SetSession) Span() (int, int)      { return s.Start, s.End }

var (
	_ Statement = (*Query)(nil)
	_ Statement = (*CreateTable)(nil)
	_ Statement = (*DropTable)(nil)
	_ Statement = (*AlterTable)(nil)
	_ Statement = (*ShowTables)(nil)
	_ Statement = (*Describe)(nil)
	_ Statement = (*ShowCreateTable)(nil)
	_ Statement = (*Analyze)(nil)
	_ Statement = (*ShowStats)(nil)
	_ Statement = (*DescribeDetail)(nil)
	_ Statement = (*Optimize)(nil)
	_ Statement = (*SetSession)(nil)
)
