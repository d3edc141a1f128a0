// Command mkdata writes the Parquet fixtures of the SQL logic tests (tests/testdata)
// with DuckDB, so that they can be regenerated exactly from this file:
//
//	cd tests/oracle && go run ./cmd/mkdata -out ../testdata
//
// Every fixture is small (well under 50 KB) and its rows are spelled out below, so a
// reader of a .slt file can check an expected result against the data by hand.
package main

import (
	"database/sql"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2"
)

// fixture is one Parquet file: its path under the output directory and the query
// whose result it holds.
type fixture struct {
	path  string
	query string
	// rowGroupSize, when set, splits the file into row groups of that many rows.
	rowGroupSize int
}

var fixtures = []fixture{
	// Integers of every width, floats with NULL/NaN/-0.0, and DECIMAL(15,2).
	{path: "nums.parquet", query: `
SELECT * FROM (VALUES
 (1,  1::TINYINT,  10::SMALLINT,  100::INTEGER,  1000::BIGINT,  1::UTINYINT,  10::USMALLINT,  100::UINTEGER,  1000::UBIGINT,  1.5::FLOAT,  1.5::DOUBLE,  10.25::DECIMAL(15,2)),
 (2,  -2::TINYINT, -20::SMALLINT, -200::INTEGER, -2000::BIGINT, 2::UTINYINT,  20::USMALLINT,  200::UINTEGER,  2000::UBIGINT,  -2.25::FLOAT, -2.25::DOUBLE, -20.50::DECIMAL(15,2)),
 (3,  3::TINYINT,  30::SMALLINT,  300::INTEGER,  3000::BIGINT,  3::UTINYINT,  30::USMALLINT,  300::UINTEGER,  3000::UBIGINT,  0.5::FLOAT,  0.1::DOUBLE,  0.01::DECIMAL(15,2)),
 (4,  NULL,        NULL,          NULL,          NULL,          NULL,         NULL,           NULL,           NULL,            NULL,        NULL,         NULL),
 (5,  5::TINYINT,  50::SMALLINT,  500::INTEGER,  5000::BIGINT,  5::UTINYINT,  50::USMALLINT,  500::UINTEGER,  5000::UBIGINT,  4.0::FLOAT,  'NaN'::DOUBLE, 99.99::DECIMAL(15,2)),
 (6,  0::TINYINT,  0::SMALLINT,   0::INTEGER,    0::BIGINT,     0::UTINYINT,  0::USMALLINT,   0::UINTEGER,    0::UBIGINT,     0.0::FLOAT,  -0.0::DOUBLE, 0.00::DECIMAL(15,2)),
 (7,  7::TINYINT,  70::SMALLINT,  700::INTEGER,  7000::BIGINT,  7::UTINYINT,  70::USMALLINT,  700::UINTEGER,  7000::UBIGINT,  -8.0::FLOAT, 1e10::DOUBLE, 1234567890123.45::DECIMAL(15,2))
) AS t(id, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, d)`},
	// The extremes of each integer width, for MIN/MAX and overflow.
	{path: "limits.parquet", query: `
SELECT * FROM (VALUES
 ('max', 127::TINYINT,  32767::SMALLINT,  2147483647::INTEGER,  9223372036854775807::BIGINT,  255::UTINYINT, 65535::USMALLINT, 4294967295::UINTEGER, 18446744073709551615::UBIGINT),
 ('min', (-128)::TINYINT, (-32768)::SMALLINT, (-2147483648)::INTEGER, (-9223372036854775808)::BIGINT, 0::UTINYINT,   0::USMALLINT,     0::UINTEGER,          0::UBIGINT)
) AS t(name, i8, i16, i32, i64, u8, u16, u32, u64)`},
	// Strings: empty, NULL, unicode, LIKE metacharacters, padding, mixed case.
	{path: "strs.parquet", query: `
SELECT * FROM (VALUES
 (1, 'apple',      'a'),
 (2, 'Banana',     'b'),
 (3, '',           'a'),
 (4, NULL,         'b'),
 (5, 'ünïcödé',    'a'),
 (6, '日本語',      NULL),
 (7, 'a_b%c',      'a'),
 (8, '  padded  ', 'b'),
 (9, 'cherry',     'c'),
 (10, 'APPLE pie', 'c')
) AS t(id, s, tag)`},
	// Dates and timestamps in every unit, and one TIMESTAMPTZ column (stored as UTC).
	{path: "dates.parquet", query: `
SELECT id, d, ts, ts::TIMESTAMP_MS AS ts_ms, ts::TIMESTAMP_NS AS ts_ns, tsz FROM (VALUES
 (1, DATE '2024-01-15', TIMESTAMP '2024-01-15 10:30:00',        TIMESTAMPTZ '2024-01-15 10:30:00+00'),
 (2, DATE '2024-02-29', TIMESTAMP '2024-02-29 23:59:59.5',      TIMESTAMPTZ '2024-02-29 23:59:59+00'),
 (3, DATE '2023-12-31', TIMESTAMP '2023-12-31 00:00:00',        TIMESTAMPTZ '2023-12-31 12:00:00+00'),
 (4, NULL,              NULL,                                   NULL),
 (5, DATE '1970-01-01', TIMESTAMP '1970-01-01 00:00:00.123',    TIMESTAMPTZ '1970-01-01 00:00:00+00'),
 (6, DATE '1999-07-04', TIMESTAMP '1999-07-04 06:07:08.000009', TIMESTAMPTZ '1999-07-04 06:07:08+00'),
 (7, DATE '2024-03-31', TIMESTAMP '2024-03-31 12:00:00',        TIMESTAMPTZ '2024-03-31 12:00:00+00')
) AS t(id, d, ts, tsz)`},
	// Every pair of three-valued booleans, for truth tables.
	{path: "bools.parquet", query: `
SELECT (row_number() OVER (ORDER BY p DESC NULLS LAST, q DESC NULLS LAST))::INTEGER AS id, p, q FROM
 (VALUES (true), (false), (NULL::BOOLEAN)) AS a(p),
 (VALUES (true), (false), (NULL::BOOLEAN)) AS b(q)
ORDER BY p DESC NULLS LAST, q DESC NULLS LAST`},
	// A people/orders/items schema for joins: NULL keys, duplicate keys, and keys
	// without a match on either side.
	{path: "people.parquet", query: `
SELECT * FROM (VALUES
 (1, 'Ada',    'London', 36,   NULL),
 (2, 'Bob',    'Paris',  25,   1),
 (3, 'Cleo',   'London', 41,   1),
 (4, 'Dan',    NULL,     NULL, 2),
 (5, 'Eve',    'Berlin', 29,   2),
 (6, 'Bob',    'Berlin', 52,   3),
 (7, 'Gus',    'Paris',  25,   NULL)
) AS t(id, name, city, age, manager_id)`},
	{path: "orders.parquet", query: `
SELECT order_id, person_id, order_date, amount::DECIMAL(15,2) AS amount, status FROM (VALUES
 (101, 1,    DATE '2024-01-03', 25.00,  'shipped'),
 (102, 1,    DATE '2024-01-17', 100.50, 'shipped'),
 (103, 2,    DATE '2024-02-01', 7.25,   'pending'),
 (104, 3,    DATE '2024-02-14', 60.00,  'shipped'),
 (105, 3,    DATE '2024-03-01', 60.00,  'cancelled'),
 (106, 3,    DATE '2024-03-09', 12.75,  NULL),
 (107, NULL, DATE '2024-03-10', 5.00,   'pending'),
 (108, 99,   DATE '2024-03-15', 42.00,  'shipped'),
 (109, 5,    NULL,              NULL,   'pending'),
 (110, NULL, DATE '2024-04-01', 18.00,  'shipped')
) AS t(order_id, person_id, order_date, amount, status)`},
	{path: "items.parquet", query: `
SELECT * FROM (VALUES
 (101, 1, 'pen',    2,    1.5::DOUBLE),
 (101, 2, 'paper',  1,    4.0),
 (102, 1, 'lamp',   1,    80.0),
 (102, 2, 'bulb',   4,    5.125),
 (103, 1, 'pen',    5,    1.45),
 (104, 1, 'chair',  1,    60.0),
 (106, 1, 'pen',    NULL, 1.5),
 (108, 1, 'desk',   1,    42.0),
 (200, 1, 'ghost',  3,    1.0),
 (NULL, 1, 'orphan', 1,   NULL)
) AS t(order_id, line_no, product, qty, price)`},
	// Sales rows for GROUP BY, HAVING and window functions: ties, a NULL region.
	{path: "sales.parquet", query: `
SELECT * FROM (VALUES
 ('east',  'ann',  DATE '2024-01-01', 100, 1),
 ('east',  'ann',  DATE '2024-01-02', 150, 2),
 ('east',  'bill', DATE '2024-01-02', 150, 3),
 ('east',  'bill', DATE '2024-01-04', 50,  1),
 ('west',  'cara', DATE '2024-01-01', 200, 4),
 ('west',  'cara', DATE '2024-01-03', 200, 2),
 ('west',  'dev',  DATE '2024-01-03', 75,  1),
 ('west',  'dev',  DATE '2024-01-05', NULL, 1),
 ('north', 'eli',  DATE '2024-01-02', 300, 5),
 (NULL,    'fay',  DATE '2024-01-06', 10,  1)
) AS t(region, rep, day, amount, units)`},
	// Binary and nested columns, which Lore reads and passes through.
	{path: "nested.parquet", query: `
SELECT * FROM (VALUES
 (1, '\x00\xFFab'::BLOB, ['a', 'b'],  {'x': 1, 'y': 'one'}),
 (2, ''::BLOB,           [],          {'x': 2, 'y': NULL}),
 (3, NULL,               NULL,        NULL),
 (4, 'plain'::BLOB,      ['c', NULL], {'x': NULL, 'y': 'four'})
) AS t(id, bin, tags, info)`},
	// A table with no rows (the schema is kept).
	{path: "empty.parquet", query: `
SELECT 1::INTEGER AS id, 1.0::DOUBLE AS v, 'x' AS s, 1.00::DECIMAL(15,2) AS d, DATE '2024-01-01' AS day LIMIT 0`},
	// Five thousand generated rows in several row groups (DuckDB rounds the size up to 2048), to cross batch boundaries.
	{path: "big.parquet", rowGroupSize: 1000, query: `
SELECT i AS id, (i % 7)::INTEGER AS g, (i * 0.5)::DOUBLE AS v, 'k' || (i % 13) AS s,
       CASE WHEN i % 10 = 0 THEN NULL ELSE i % 100 END AS n
FROM range(1, 5001) AS r(i)`},
	// Long strings in three row groups (2048, 2048, 1904 rows), whose footer bounds
	// DuckDB truncates to 256 bytes and marks inexact: s starts with 'a', 'b', 'c' in
	// row groups 0, 1, 2, then 300 'y' and the row number in five digits; n is 280 'q'
	// and i % 37, NULL when i % 5 = 0; k is short, 'k0', 'k1', 'k2', with exact bounds.
	{path: "longstr.parquet", rowGroupSize: 2048, query: `
SELECT i AS id, chr(97 + (i // 2048)::INTEGER) || repeat('y', 300) || lpad(i::VARCHAR, 5, '0') AS s,
       CASE WHEN i % 5 = 0 THEN NULL ELSE repeat('q', 280) || (i % 37)::VARCHAR END AS n,
       'k' || (i // 2048)::VARCHAR AS k
FROM range(0, 6000) AS r(i)`},
	// Several files of one schema in one directory (a listing).
	{path: "multi/part-0.parquet", query: `SELECT * FROM (VALUES (1::BIGINT, 'a', 1.5::DOUBLE), (2, 'b', 2.5), (3, 'a', NULL)) AS t(id, grp, val)`},
	{path: "multi/part-1.parquet", query: `SELECT * FROM (VALUES (4::BIGINT, 'b', 4.0::DOUBLE), (5, NULL, 5.0)) AS t(id, grp, val)`},
	{path: "multi/part-2.parquet", query: `SELECT * FROM (VALUES (6::BIGINT, 'c', -1.0::DOUBLE)) AS t(id, grp, val)`},
	// A Hive-partitioned directory; the partition columns live only in the paths.
	{path: "hive/year=2024/month=1/data.parquet", query: `SELECT * FROM (VALUES (1::BIGINT, 10.0::DOUBLE), (2, 20.0)) AS t(id, amount)`},
	{path: "hive/year=2024/month=2/data.parquet", query: `SELECT * FROM (VALUES (3::BIGINT, 30.0::DOUBLE)) AS t(id, amount)`},
	{path: "hive/year=2025/month=1/data.parquet", query: `SELECT * FROM (VALUES (4::BIGINT, 40.0::DOUBLE), (5, NULL)) AS t(id, amount)`},
	{path: "hive/year=2025/month=12/data.parquet", query: `SELECT * FROM (VALUES (6::BIGINT, 60.0::DOUBLE)) AS t(id, amount)`},
	// A string partition key with a NULL partition.
	{path: "hivekey/key=a/data.parquet", query: `SELECT * FROM (VALUES (1::INTEGER, 'x'), (2, 'y')) AS t(n, v)`},
	{path: "hivekey/key=b/data.parquet", query: `SELECT * FROM (VALUES (3::INTEGER, 'z')) AS t(n, v)`},
	{path: "hivekey/key=NULL/data.parquet", query: `SELECT * FROM (VALUES (4::INTEGER, 'w'), (5, NULL)) AS t(n, v)`},
	// A small star schema for join graphs (join_graphs.slt). js_dates: one row a day of
	// 2000 and 2001 (d_sk 1..731); js_sales: 6000 rows in date order (three row groups),
	// whose item 61, demo 501..503 and store 13 have no dimension row, demo NULL every
	// 97th row; js_returns: the sales with i % 10 = 3, returned 0..29 days later.
	{path: "js_dates.parquet", query: `
SELECT (i + 1)::INTEGER AS d_sk, DATE '2000-01-01' + i::INTEGER AS d_date,
       ((year(DATE '2000-01-01' + i::INTEGER) - 2000) * 12 + month(DATE '2000-01-01' + i::INTEGER))::INTEGER AS d_month_seq,
       year(DATE '2000-01-01' + i::INTEGER)::INTEGER AS d_year, month(DATE '2000-01-01' + i::INTEGER)::INTEGER AS d_moy
FROM range(0, 731) AS r(i)`},
	{path: "js_items.parquet", query: `
SELECT i::INTEGER AS i_sk, 'I' || lpad(i::VARCHAR, 4, '0') AS i_id,
       CASE WHEN i % 17 = 0 THEN NULL ELSE ['Books', 'Music', 'Home', 'Sports'][(i % 4) + 1] END AS i_cat,
       'b' || (i % 7)::VARCHAR AS i_brand
FROM range(1, 61) AS r(i)`},
	{path: "js_regions.parquet", query: `SELECT * FROM (VALUES (1::INTEGER, 'EAST'), (2, 'WEST'), (3, 'NORTH'), (4, 'SOUTH')) AS t(r_sk, r_name)`},
	{path: "js_stores.parquet", query: `
SELECT i::INTEGER AS s_sk, ['NY', 'CA', 'TX', 'WA'][(i % 4) + 1] AS s_state,
       CASE WHEN i = 12 THEN NULL ELSE ((i % 4) + 1)::INTEGER END AS s_region
FROM range(1, 13) AS r(i)`},
	{path: "js_demo.parquet", query: `
SELECT i::INTEGER AS cd_id, ['M', 'S', 'D', 'W'][(i % 4) + 1] AS cd_status,
       ['Primary', 'College', 'Advanced', 'Unknown'][((i // 4) % 4) + 1] AS cd_edu, ['F', 'M'][((i // 16) % 2) + 1] AS cd_gender
FROM range(1, 501) AS r(i)`},
	{path: "js_sales.parquet", rowGroupSize: 2048, query: `
SELECT i::INTEGER AS ss_id, ((i * 7) % 61 + 1)::INTEGER AS ss_item, (i // 3)::BIGINT AS ss_order,
       (i * 731 // 6000 + 1)::INTEGER AS ss_date, CASE WHEN i % 97 = 0 THEN NULL ELSE ((i * 37) % 503 + 1)::INTEGER END AS ss_demo,
       (i % 13 + 1)::INTEGER AS ss_store, ((i * 29) % 200)::INTEGER AS ss_price, (i % 10 + 1)::INTEGER AS ss_qty
FROM range(0, 6000) AS r(i)`},
	{path: "js_returns.parquet", query: `
SELECT ((i * 7) % 61 + 1)::INTEGER AS sr_item, (i // 3)::BIGINT AS sr_order, ((i * 53) % 500 + 1)::INTEGER AS sr_demo,
       least((i * 731 // 6000 + 1) + i % 30, 731)::INTEGER AS sr_date, ((i * 29) % 200 * (i % 3 + 1))::INTEGER AS sr_amount
FROM range(0, 6000) AS r(i) WHERE i % 10 = 3`},
	// Infinite and BC dates and timestamps as DuckDB stores them in Parquet.
	{path: "dates_inf.parquet", query: `
SELECT * FROM (VALUES
 (1, DATE '2024-01-15', TIMESTAMP '2024-01-15 10:30:00', TIMESTAMPTZ '2024-01-15 10:30:00+00', TIMESTAMP_NS '2024-01-15 10:30:00.123456789'),
 (2, 'infinity'::DATE, 'infinity'::TIMESTAMP, 'infinity'::TIMESTAMPTZ, 'infinity'::TIMESTAMP_NS),
 (3, '-infinity'::DATE, '-infinity'::TIMESTAMP, '-infinity'::TIMESTAMPTZ, '-infinity'::TIMESTAMP_NS),
 (4, '0044-03-15 (BC)'::DATE, '0044-03-15 (BC) 12:00:00'::TIMESTAMP, NULL, NULL),
 (5, NULL, NULL, NULL, NULL)) AS t(id, d, ts, tstz, tsns)`},
	// UUIDs (the UUID logical type; one above 8000… so that a signed order would
	// differ, one repeated, one NULL) and intervals (the legacy INTERVAL converted
	// type: months, days, milliseconds).
	{path: "uuids.parquet", query: `
SELECT * FROM (VALUES
 (1, '00000000-0000-0000-0000-000000000001'::UUID, INTERVAL '1 month 2 days 3 seconds'),
 (2, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::UUID, INTERVAL '1 year'),
 (3, 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF'::UUID, INTERVAL '36 hours 0.25 seconds'),
 (4, NULL, NULL),
 (5, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::UUID, INTERVAL '0 days'),
 (6, '7fffffff-0000-0000-0000-000000000000'::UUID, INTERVAL '14 months 40 days 1.5 seconds')
) AS t(id, u, iv)`},
	// Nested columns: a list, a list of strings, a list of structs, a struct holding a
	// list, a map and a list of lists; one row of empty ones, one all NULL, and NULLs
	// inside.
	{path: "nested_cols.parquet", query: `
SELECT * FROM (VALUES
 (1, [1, 2, 3], ['a', 'b'], [{'a': 1, 'b': 'x'}, {'a': 2, 'b': NULL}], {'x': 1, 'y': 'one', 'l': [10, 20]}, MAP {'k1': 1, 'k2': 2}, [[1, 2], [3]]),
 (2, [], [], [], {'x': 2, 'y': NULL, 'l': []}, MAP {}, []),
 (3, NULL, NULL, NULL, NULL, NULL, NULL),
 (4, [4, NULL, 6], [NULL, 'c'], [NULL, {'a': 3, 'b': 'z'}], {'x': NULL, 'y': 'four', 'l': NULL}, MAP {'k3': NULL}, [NULL, [], [4, NULL]]),
 (5, [7], ['d'], [{'a': 5, 'b': 'w'}], {'x': 5, 'y': 'five', 'l': [50]}, MAP {'k1': 5}, [[5]])
) AS t(id, l, ls, sl, s, m, ll)`},
	// Times of day (the TIME logical type, microseconds), one NULL, one repeated.
	{path: "times.parquet", query: `
SELECT * FROM (VALUES
 (1, TIME '08:30:00', TIMESTAMP '2024-01-15 08:30:00'),
 (2, TIME '23:59:59.999999', TIMESTAMP '2024-01-15 23:59:59.999999'),
 (3, TIME '00:00:00', TIMESTAMP '2024-01-16 00:00:00'),
 (4, NULL, NULL),
 (5, TIME '12:00:00.5', TIMESTAMP '2024-01-16 12:00:00.5'),
 (6, TIME '08:30:00', TIMESTAMP '2024-01-17 08:30:00')
) AS t(id, t, ts)`},
	// Nested columns with equal, NULL-holding and prefix values, to compare, sort
	// and group: lists of integers, doubles (-0.0, NaN, Infinity) and lists, structs,
	// maps.
	{path: "nested_keys.parquet", query: `
SELECT * FROM (VALUES
 (1, [1, 2],    [1.5::DOUBLE, -0.0], {'a': 1, 'b': 'x'},    MAP {'k': 1},         [[1], [2, 3]]),
 (2, [1, NULL], [0.0::DOUBLE],       {'a': 1, 'b': NULL},   MAP {'k': 1, 'j': 2}, [[1, 5]]),
 (3, [1, 2],    ['nan'::DOUBLE],     {'a': NULL, 'b': 'x'}, MAP {'a': 0},         []),
 (4, [],        [-1.0::DOUBLE],      {'a': 2, 'b': 'a'},    MAP {'k': 1},         [NULL]),
 (5, NULL,      NULL,                NULL,                  NULL,                 NULL),
 (6, [1],       ['inf'::DOUBLE, NULL], {'a': 1, 'b': 'x'},  MAP {'k': 1},         [[1], [2, 3]]),
 (7, [NULL],    [-0.0::DOUBLE],      {'a': 1, 'b': ''},     MAP {'k': NULL},      [[]]),
 (8, [1, NULL], [0.0::DOUBLE],       {'a': -1, 'b': 'x y'}, MAP {'k': 1, 'j': 2}, [[1, NULL]])
) AS t(id, l, d, s, m, ll)`},
	// A NULL fixed-size array, which DuckDB writes with levels that contradict each
	// other (elements under a NULL list): not valid Parquet, refused as corrupt.
	{path: "null_fixed_array.parquet", query: `
SELECT * FROM (VALUES (1, [1, 2, 3]::INTEGER[3]), (2, NULL), (3, [4, 5, 6]::INTEGER[3])) AS t(id, a)`},
	// A dictionary-encoded string column of numbers and one word, and a code per row:
	// a conversion of the numbers must not fail on the word a filter drops.
	{path: "numwords.parquet", query: `
SELECT i AS id, CASE WHEN i % 3 = 0 THEN 'none' ELSE (i % 3)::VARCHAR END AS s, i % 3 AS code
FROM range(3000) t(i)`},
}

func main() {
	out := flag.String("out", "../testdata", "directory to write the fixtures into")
	flag.Parse()
	if err := run(*out); err != nil {
		log.Fatal(err)
	}
}

func run(out string) error {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return fmt.Errorf("cannot open duckdb: %w", err)
	}
	defer db.Close()
	if _, err := db.Exec("SET threads = 1"); err != nil {
		return err
	}
	for _, f := range fixtures {
		path := filepath.Join(out, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		opts := "FORMAT parquet, COMPRESSION zstd"
		if f.rowGroupSize > 0 {
			opts += fmt.Sprintf(", ROW_GROUP_SIZE %d", f.rowGroupSize)
		}
		q := fmt.Sprintf("COPY (%s) TO '%s' (%s)", strings.TrimSpace(f.query), strings.ReplaceAll(path, "'", "''"), opts)
		if _, err := db.Exec(q); err != nil {
			return fmt.Errorf("cannot write %s: %w", f.path, err)
		}
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		fmt.Printf("%-40s %6d bytes\n", f.path, st.Size())
	}
	return nil
}
