// Package sql turns the text of a request into statements: it splits the text at
// semicolons, reads Lore's own statements (CREATE TABLE … WITH, DROP TABLE, ALTER
// TABLE, SHOW, DESCRIBE, ANALYZE, OPTIMIZE, SET SESSION) with a small recursive-
// descent parser, and hands queries (SELECT, VALUES, TABLE, WITH, set operations,
// EXPLAIN [ANALYZE]) to PostgreSQL's own grammar through pg_query.
//
// Invariants:
//
//   - Every position is a byte offset into the original text of the whole request:
//     statement spans, option and value positions, error positions, and every
//     Location inside a pg_query tree. Each statement is parsed alone (so a request
//     of many statements costs time linear in its length) and the Locations of its
//     tree are then moved by the statement's start offset; PostgreSQL's
//     character-counted error cursor is converted to bytes.
//   - A string literal written where a table belongs (`FROM 'data/*.parquet'`,
//     `JOIN 'x.parquet'`) is rewritten, at the same byte length, into a quoted
//     identifier before PostgreSQL sees it; the resulting RangeVar carries the
//     literal's full value and its offset is listed in Query.Paths.
//   - Errors are *errs.Error: SYNTAX_ERROR with a position for text that does not
//     parse, ANALYSIS_ERROR for statements PostgreSQL knows but Lore does not run.
//     Bad input never panics; input that could overflow the C parser's stack (deep
//     left-associative chains), NUL bytes and invalid UTF-8 are refused up front.
//   - Identifiers follow PostgreSQL: unquoted ones are lower-cased, quoted ones keep
//     their case, and all are truncated to MaxIdentBytes. Keywords are
//     case-insensitive.
//
// The package knows nothing of catalogs or types: whether a table, option key or
// setting exists is for the planner to decide.
package sql
