// Package tests holds Lore's cross-package suites.
//
// TestSQLLogic runs the sqllogictest files in sql/ (format: package tests/slt)
// against a fresh engine per file, each file a subtest:
//
//	go test ./tests -run 'TestSQLLogic/joins.slt'
//	go test ./tests -run TestSQLLogic -rewrite   # refill expectations from Lore
//
// Every expectation in sql/ is verified independently against DuckDB by the oracle
// module in oracle/ (cd tests/oracle && go test ./...), so a failure here is Lore
// disagreeing with DuckDB, or with a Lore-only expectation ("onlyif lore") written
// down in the file that holds it (ddl.slt documents the result shapes of SHOW
// TABLES, DESCRIBE and SHOW CREATE TABLE).
//
// Fixtures live in testdata/ (written by oracle/cmd/mkdata); statements refer to that
// directory through the token __TESTDATA__, replaced by its absolute path, and
// results mentioning that path show the token again.
package tests
