// Package tests holds Lore's cross-package suites. TestSQLLogic runs the
// sqllogictest files in sql/ against a fresh engine per file; the files' expected
// results are verified independently against DuckDB by the oracle module in
// oracle/ (see its doc), so a failure here is Lore disagreeing with DuckDB.
//
// Fixtures live in testdata/ (written by oracle/cmd/mkdata); statements refer to that
// directory through the token __TESTDATA__, replaced by its absolute path.
package tests
