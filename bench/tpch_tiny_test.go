package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// tinyTPCH builds the eight TPC-H tables at a toy size in DuckDB, with the
// standard schema and value domains chosen so that every query's predicates match
// some rows, and writes each to dir/<table>/part-0.parquet. It exercises the query
// texts and the comparison; it is not TPC-H data (gen.TPCH writes that).
var tinyTPCH = []string{
	`CREATE TABLE region AS SELECT * FROM (VALUES (0, 'AFRICA', 'c'), (1, 'AMERICA', 'c'), (2, 'ASIA', 'c'),
		(3, 'EUROPE', 'c'), (4, 'MIDDLE EAST', 'c')) t(r_regionkey, r_name, r_comment)`,
	`CREATE TABLE nation AS SELECT n_nationkey::INTEGER AS n_nationkey, n_name, n_regionkey::INTEGER AS n_regionkey, 'c' AS n_comment
	 FROM (VALUES (0, 'ALGERIA', 0), (1, 'ARGENTINA', 1), (2, 'BRAZIL', 1), (3, 'CANADA', 1), (4, 'EGYPT', 4),
		(5, 'ETHIOPIA', 0), (6, 'FRANCE', 3), (7, 'GERMANY', 3), (8, 'INDIA', 2), (9, 'INDONESIA', 2), (10, 'IRAN', 4),
		(11, 'IRAQ', 4), (12, 'JAPAN', 2), (13, 'JORDAN', 4), (14, 'KENYA', 0), (15, 'MOROCCO', 0), (16, 'MOZAMBIQUE', 0),
		(17, 'PERU', 1), (18, 'CHINA', 2), (19, 'ROMANIA', 3), (20, 'SAUDI ARABIA', 4), (21, 'VIETNAM', 2),
		(22, 'RUSSIA', 3), (23, 'UNITED KINGDOM', 3), (24, 'UNITED STATES', 1)) t(n_nationkey, n_name, n_regionkey)`,
	`CREATE TABLE supplier AS SELECT i::INTEGER AS s_suppkey, 'Supplier#' || lpad(i::VARCHAR, 9, '0') AS s_name,
		'address ' || i AS s_address, (hash(i, 1) % 25)::INTEGER AS s_nationkey,
		((hash(i, 1) % 25) + 10)::VARCHAR || '-' || lpad((hash(i, 2) % 1000)::VARCHAR, 3, '0') || '-555-0100' AS s_phone,
		((hash(i, 3) % 1099998) / 100.0 - 999.99)::DECIMAL(15,2) AS s_acctbal,
		CASE WHEN i % 7 = 0 THEN 'slyly Customer even Complaints' ELSE 'quickly final deposits' END AS s_comment
	 FROM range(1, 41) r(i)`,
	`CREATE TABLE part AS SELECT i::INTEGER AS p_partkey,
		['green', 'forest', 'red', 'blue', 'almond', 'khaki', 'navy', 'ivory'][(hash(i, 1) % 8)::BIGINT + 1] || ' ' ||
		['green', 'forest', 'red', 'blue', 'almond', 'khaki', 'navy', 'ivory'][(hash(i, 2) % 8)::BIGINT + 1] AS p_name,
		'Manufacturer#' || (hash(i, 3) % 5 + 1) AS p_mfgr,
		'Brand#' || (hash(i, 3) % 5 + 1) || (hash(i, 4) % 5 + 1) AS p_brand,
		['STANDARD', 'SMALL', 'MEDIUM', 'LARGE', 'ECONOMY', 'PROMO'][(hash(i, 5) % 6)::BIGINT + 1] || ' ' ||
		['ANODIZED', 'BURNISHED', 'PLATED', 'POLISHED', 'BRUSHED'][(hash(i, 6) % 5)::BIGINT + 1] || ' ' ||
		['TIN', 'NICKEL', 'BRASS', 'STEEL', 'COPPER'][(hash(i, 7) % 5)::BIGINT + 1] AS p_type,
		(hash(i, 8) % 50 + 1)::INTEGER AS p_size,
		['SM', 'LG', 'MED', 'JUMBO', 'WRAP'][(hash(i, 9) % 5)::BIGINT + 1] || ' ' ||
		['CASE', 'BOX', 'BAG', 'JAR', 'PKG', 'PACK', 'CAN', 'DRUM'][(hash(i, 10) % 8)::BIGINT + 1] AS p_container,
		((90000 + (i / 10) % 20001 + 100 * (i % 1000)) / 100.0)::DECIMAL(15,2) AS p_retailprice,
		'comment' AS p_comment
	 FROM range(1, 801) r(i)`,
	// Four suppliers per part, by the specification's formula for S = 40.
	`CREATE TABLE partsupp AS SELECT p.i::INTEGER AS ps_partkey,
		(((p.i + j.j * (10 + (p.i - 1) // 40)) % 40) + 1)::INTEGER AS ps_suppkey,
		(hash(p.i, j.j, 1) % 9999 + 1)::INTEGER AS ps_availqty,
		((hash(p.i, j.j, 2) % 100000 + 100) / 100.0)::DECIMAL(15,2) AS ps_supplycost, 'c' AS ps_comment
	 FROM range(1, 801) p(i), range(0, 4) j(j)`,
	`CREATE TABLE customer AS SELECT i::INTEGER AS c_custkey, 'Customer#' || lpad(i::VARCHAR, 9, '0') AS c_name,
		'address ' || i AS c_address, (hash(i, 1) % 25)::INTEGER AS c_nationkey,
		((hash(i, 1) % 25) + 10)::VARCHAR || '-' || lpad((hash(i, 2) % 1000)::VARCHAR, 3, '0') || '-123-4567' AS c_phone,
		((hash(i, 3) % 1099998) / 100.0 - 999.99)::DECIMAL(15,2) AS c_acctbal,
		['AUTOMOBILE', 'BUILDING', 'FURNITURE', 'MACHINERY', 'HOUSEHOLD'][(hash(i, 4) % 5)::BIGINT + 1] AS c_mktsegment,
		'c' AS c_comment
	 FROM range(1, 601) r(i)`,
	// Customers whose key is a multiple of 3 place no orders.
	`CREATE TABLE orders AS SELECT i::INTEGER AS o_orderkey,
		(CASE WHEN (hash(i, 1) % 600 + 1) % 3 = 0 THEN hash(i, 1) % 600 ELSE hash(i, 1) % 600 + 1 END)::INTEGER AS o_custkey,
		CASE WHEN d + 121 < DATE '1995-06-17' THEN 'F' WHEN d > DATE '1995-06-17' THEN 'O' ELSE 'P' END AS o_orderstatus,
		((hash(i, 3) % 50000000) / 100.0 + 1000)::DECIMAL(15,2) AS o_totalprice,
		d AS o_orderdate,
		['1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW'][(hash(i, 4) % 5)::BIGINT + 1] AS o_orderpriority,
		'Clerk#' || lpad((hash(i, 5) % 1000)::VARCHAR, 9, '0') AS o_clerk, 0 AS o_shippriority,
		CASE WHEN i % 10 = 0 THEN 'pending special foxes requests' ELSE 'ironic deposits' END AS o_comment
	 FROM (SELECT i, DATE '1992-01-01' + (hash(i, 2) % 2405)::INTEGER AS d FROM range(1, 6001) r(i))`,
	`CREATE TABLE lineitem AS
	 WITH l AS (
		SELECT o_orderkey, o_orderdate, ln, (hash(o_orderkey, ln, 1) % 800 + 1)::INTEGER AS p, (hash(o_orderkey, ln, 2) % 4)::INTEGER AS j,
			o_orderdate + (hash(o_orderkey, ln, 3) % 121 + 1)::INTEGER AS ship
		FROM orders, range(1, 8) r(ln)
		WHERE ln <= hash(o_orderkey, 9) % 7 + 1)
	 SELECT o_orderkey::INTEGER AS l_orderkey, p AS l_partkey, (((p + j * (10 + (p - 1) // 40)) % 40) + 1)::INTEGER AS l_suppkey,
		ln::INTEGER AS l_linenumber,
		(hash(o_orderkey, ln, 4) % 50 + 1)::DECIMAL(15,2) AS l_quantity,
		((hash(o_orderkey, ln, 4) % 50 + 1) * (90000 + (p / 10) % 20001 + 100 * (p % 1000)) / 100.0)::DECIMAL(15,2) AS l_extendedprice,
		((hash(o_orderkey, ln, 5) % 11) / 100.0)::DECIMAL(15,2) AS l_discount,
		((hash(o_orderkey, ln, 6) % 9) / 100.0)::DECIMAL(15,2) AS l_tax,
		CASE WHEN ship + (hash(o_orderkey, ln, 7) % 30 + 1)::INTEGER <= DATE '1995-06-17'
			THEN CASE WHEN hash(o_orderkey, ln, 8) % 2 = 0 THEN 'R' ELSE 'A' END ELSE 'N' END AS l_returnflag,
		CASE WHEN ship > DATE '1995-06-17' THEN 'O' ELSE 'F' END AS l_linestatus,
		ship AS l_shipdate,
		o_orderdate + (hash(o_orderkey, ln, 9) % 61 + 30)::INTEGER AS l_commitdate,
		ship + (hash(o_orderkey, ln, 7) % 30 + 1)::INTEGER AS l_receiptdate,
		['DELIVER IN PERSON', 'COLLECT COD', 'NONE', 'TAKE BACK RETURN'][(hash(o_orderkey, ln, 10) % 4)::BIGINT + 1] AS l_shipinstruct,
		['REG AIR', 'AIR', 'RAIL', 'SHIP', 'TRUCK', 'MAIL', 'FOB'][(hash(o_orderkey, ln, 11) % 7)::BIGINT + 1] AS l_shipmode,
		'c' AS l_comment
	 FROM l`,
}

func writeTinyTPCH(ctx context.Context, dir string) error {
	d, err := openDuckDB(ctx, 2, nil)
	if err != nil {
		return err
	}
	defer d.close()
	for _, q := range tinyTPCH {
		if _, err := d.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%.60s: %w", q, err)
		}
	}
	for _, t := range tpchTables {
		if err := os.MkdirAll(filepath.Join(dir, t), 0o755); err != nil {
			return err
		}
		q := fmt.Sprintf("COPY %s TO %s (FORMAT parquet)", t, sqlString(filepath.Join(dir, t, "part-0.parquet")))
		if _, err := d.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return os.WriteFile(filepath.Join(dir, completeMarker), nil, 0o644)
}

// TestTPCHTiny runs the 22 TPC-H queries on toy data written by DuckDB and
// requires both engines to return equal results. It runs when BENCH_TPCH_TINY=1,
// since it measures Lore's coverage of TPC-H rather than the harness.
func TestTPCHTiny(t *testing.T) {
	if os.Getenv("BENCH_TPCH_TINY") != "1" {
		t.Skip("set BENCH_TPCH_TINY=1 to run the TPC-H queries on toy data")
	}
	ctx := context.Background()
	root := t.TempDir()
	cfg := TPCHConfig{SF: 0, Files: 1, DataDir: root}
	if err := writeTinyTPCH(ctx, filepath.Join(root, "tpch-sf0-1")); err != nil {
		t.Fatal(err)
	}
	s, err := TPCHSuite(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunSuite(ctx, Config{Threads: 2, Rounds: 1, Timeout: time.Minute}, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range res.Queries {
		switch {
		case !q.DuckDB.OK():
			t.Errorf("%s: DuckDB failed: %s", q.Name, q.DuckDB.Error)
		case !q.Lore.OK():
			t.Errorf("%s: Lore failed: %s", q.Name, q.Lore.Error)
		case q.Equal == nil || !*q.Equal:
			t.Errorf("%s: results differ: %s", q.Name, q.Diff)
		default:
			t.Logf("%s: %d rows, lore %.1f ms, duckdb %.1f ms", q.Name, q.Lore.Rows, q.Lore.MedianMS, q.DuckDB.MedianMS)
		}
	}
}
