// Package slt reads sqllogictest files (the .slt dialect DuckDB and DataFusion use)
// and compares query results with their expectations. It has no dependencies, so
// that both Lore's runner and the DuckDB oracle (a separate module that must never
// be linked into Lore) share one reading of the files.
//
// A file is a sequence of records separated by blank lines; lines starting with '#'
// outside a record are comments. The records:
//
//	statement ok               the statement must succeed
//	statement error [CODE]     it must fail; with CODE, with that Lore error code
//	query TYPES [SORT]         a query; TYPES has one letter per column (I integer,
//	<sql>                      R float or decimal, T anything else); SORT is
//	----                       nosort (default), rowsort or valuesort
//	<rows, columns separated by one TAB>
//	halt                       stop reading the file
//
// A record may be preceded by conditions, "skipif ENGINE" and "onlyif ENGINE", which
// decide whether an engine ("lore" or "duckdb") runs it.
//
// Values are rendered as DuckDB renders them, with NULL for null and (empty) for the
// empty string. R columns compare numerically with a relative tolerance of 1e-9, so
// an expectation written from one engine's float formatting holds for another's.
package slt
