// Package oracle runs Lore's sqllogictest files (tests/sql/*.slt) through DuckDB, an
// independent engine, to prove that every expected result in them is right. It is a
// separate Go module so that Lore itself never links DuckDB.
//
//	go test ./...                      # verify every expectation in ../sql
//	go test ./... -rewrite             # refill results and type letters from DuckDB
//	go run ./cmd/mkdata -out ../testdata  # regenerate the Parquet fixtures
//	go run ./cmd/duckq "SELECT …"      # see what DuckDB answers, rendered as here
//	go test -run TestConformance -v .  # ../conform/*.sql in both engines: the share answered alike
//	go run ./cmd/suite -dir DIR        # another engine's .test files, replayed over Parquet in both
//
// Lore's own statements are translated to DuckDB: a registered table becomes a view
// over read_parquet, a directory location becomes a recursive glob (DuckDB detects
// Hive partitions by itself), DROP TABLE becomes DROP VIEW. Records marked
// "onlyif lore" or "skipif duckdb" are not run.
//
// Values are rendered from database/sql exactly as Lore's types.Value.String renders
// Arrow values, so one expectation serves both engines: shortest round-trip floats
// with ".0" when integral, decimals at their scale, dates YYYY-MM-DD, timestamps
// YYYY-MM-DD HH:MM:SS[.ffffff] (with "+00" for TIMESTAMPTZ, the session being UTC).
package oracle
