package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// joinsTables are the joins suite's star schema, shaped like a retail warehouse's:
// sales (720K rows, in date order as loads leave them) and the returns of a tenth of
// them, demographics (1.9M rows), a date dimension, items, and stores in regions
// (a snowflake).
var joinsTables = []struct{ name, sql string }{
	{"date_dim", `SELECT (i + 1)::INTEGER AS d_date_sk, (DATE '1998-01-01' + i::INTEGER) AS d_date,
		(year(DATE '1998-01-01' + i::INTEGER) * 12 + month(DATE '1998-01-01' + i::INTEGER) - 1998 * 12)::INTEGER AS d_month_seq,
		year(DATE '1998-01-01' + i::INTEGER)::INTEGER AS d_year, month(DATE '1998-01-01' + i::INTEGER)::INTEGER AS d_moy
		FROM range(3650) t(i)`},
	{"demographics", `SELECT (i + 1)::INTEGER AS id,
		['M', 'S', 'D', 'W', 'U'][(i % 5) + 1] AS status,
		['Primary', 'Secondary', 'College', '2 yr Degree', '4 yr Degree', 'Advanced Degree', 'Unknown'][((i // 5) % 7) + 1] AS education,
		['M', 'F'][((i // 35) % 2) + 1] AS gender
		FROM range(1920800) t(i)`},
	{"region", `SELECT (i + 1)::INTEGER AS r_region_sk, ['EAST', 'WEST', 'NORTH', 'SOUTH', 'CENTRAL'][i + 1] AS r_name FROM range(5) t(i)`},
	{"store", `SELECT (i + 1)::INTEGER AS s_store_sk, 'store#' || (i + 1) AS s_name,
		['NY', 'CA', 'TX', 'WA', 'FL', 'IL', 'OH', 'GA'][(i % 8) + 1] AS s_state, ((i % 5) + 1)::INTEGER AS s_region_sk
		FROM range(100) t(i)`},
	{"item", `SELECT (i + 1)::INTEGER AS i_item_sk, 'AAAA' || lpad((i + 1)::VARCHAR, 8, '0') AS i_item_id,
		['Books', 'Music', 'Home', 'Sports', 'Shoes', 'Jewelry', 'Men', 'Women', 'Children', 'Electronics'][(hash(i) % 10)::INTEGER + 1] AS i_category,
		'brand#' || (hash(i * 7) % 50) AS i_brand
		FROM range(18000) t(i)`},
	{"sales", `SELECT ((hash(i) % 18000) + 1)::INTEGER AS item, (i // 4)::BIGINT AS order_no,
		(i * 3650 // 720000 + 1)::INTEGER AS sold_date_sk, ((hash(i * 3) % 1920800) + 1)::INTEGER AS demo_id,
		((hash(i * 5) % 100) + 1)::INTEGER AS store_sk, ((hash(i * 11) % 20000) / 100.0)::DECIMAL(7,2) AS price,
		((hash(i * 13) % 100) + 1)::INTEGER AS quantity
		FROM range(720000) t(i)`},
	{"returns", `SELECT item, order_no, ((hash(order_no * 17) % 1920800) + 1)::INTEGER AS demo_id,
		least(sold_date_sk + (hash(order_no) % 60)::INTEGER, 3650) AS returned_date_sk,
		(price * (1 + hash(order_no) % quantity))::DECIMAL(9,2) AS amount
		FROM read_parquet(SALES_FILE) WHERE hash(order_no * 31 + item) % 10 = 0`},
}

// joinsQueries are decision-support shapes over the star schema: ORs across tables,
// a scalar subquery choosing a month, date ranges on the dimension that narrow the
// fact's scan, a snowflake of five tables, and a join on two keys.
var joinsQueries = []Query{
	{Name: "or_across_tables", SQL: `SELECT count(*) FROM sales s, returns r, demographics d
WHERE s.item = r.item AND s.order_no = r.order_no AND d.id = r.demo_id
  AND ((d.status = 'M' AND s.price BETWEEN 100 AND 150) OR (d.status = 'S' AND s.price BETWEEN 50 AND 100))`},
	{Name: "or_sales_demographics", SQL: `SELECT d.education, count(*), sum(s.quantity) FROM sales s, demographics d
WHERE s.demo_id = d.id
  AND ((d.status = 'M' AND d.education = 'College' AND s.price BETWEEN 100 AND 150)
    OR (d.status = 'S' AND d.education = 'Primary' AND s.price BETWEEN 50 AND 100)
    OR (d.status = 'W' AND d.education = 'Advanced Degree' AND s.price BETWEEN 150 AND 200))
GROUP BY d.education`},
	{Name: "month_subquery", SQL: `SELECT i.i_category, count(*), sum(s.price) FROM sales s, date_dim d, item i
WHERE s.sold_date_sk = d.d_date_sk AND s.item = i.i_item_sk
  AND d.d_month_seq = (SELECT d_month_seq FROM date_dim WHERE d_date = DATE '2001-03-01')
GROUP BY i.i_category`},
	{Name: "months_between_subqueries", SQL: `SELECT s.store_sk, count(*), sum(s.quantity) FROM sales s, date_dim d
WHERE s.sold_date_sk = d.d_date_sk
  AND d.d_month_seq BETWEEN (SELECT DISTINCT d_month_seq FROM date_dim WHERE d_year = 2002 AND d_moy = 6)
                        AND (SELECT DISTINCT d_month_seq FROM date_dim WHERE d_year = 2002 AND d_moy = 6) + 11
GROUP BY s.store_sk`},
	{Name: "date_range_dimension", SQL: `SELECT d.d_moy, count(*), sum(s.price) FROM sales s JOIN date_dim d ON s.sold_date_sk = d.d_date_sk
WHERE d.d_date BETWEEN DATE '2003-01-15' AND DATE '2003-02-14' GROUP BY d.d_moy`},
	{Name: "snowflake_5", SQL: `SELECT st.s_state, i.i_category, count(*), sum(s.price)
FROM sales s, date_dim d, item i, store st, region r
WHERE s.sold_date_sk = d.d_date_sk AND s.item = i.i_item_sk AND s.store_sk = st.s_store_sk AND st.s_region_sk = r.r_region_sk
  AND r.r_name = 'EAST' AND d.d_year = 2001 AND d.d_moy IN (11, 12) AND i.i_category IN ('Books', 'Music')
GROUP BY st.s_state, i.i_category`},
	{Name: "returns_of_sales", SQL: `SELECT count(*), sum(r.amount), sum(s.price) FROM sales s JOIN returns r ON s.item = r.item AND s.order_no = r.order_no
WHERE r.returned_date_sk BETWEEN 1000 AND 1100`},
	{Name: "string_key_dimension", SQL: `SELECT count(*), sum(r.amount) FROM returns r JOIN item i ON r.item = i.i_item_sk
WHERE i.i_item_id BETWEEN 'AAAA00001000' AND 'AAAA00001999' AND i.i_brand = 'brand#7'`},
	{Name: "or_dimension_and_fact_dates", SQL: `SELECT count(*) FROM sales s, date_dim d, store st
WHERE s.sold_date_sk = d.d_date_sk AND s.store_sk = st.s_store_sk
  AND ((d.d_year = 2000 AND st.s_state = 'TX') OR (d.d_year = 2004 AND st.s_state = 'CA'))`},
}

// JoinsConfig says where the joins suite's data is cached.
type JoinsConfig struct {
	DataDir string
}

// JoinsSuite returns the joins suite, generating its data with DuckDB first when the
// cache under cfg.DataDir does not hold it.
func JoinsSuite(ctx context.Context, cfg JoinsConfig, progress io.Writer) (*Suite, error) {
	dir := filepath.Join(cfg.DataDir, "joins-star")
	err := ensureData(dir, progress, func(out string, _ func(done, total int64)) error {
		return generateJoins(ctx, out)
	})
	if err != nil {
		return nil, fmt.Errorf("cannot generate the joins data: %w", err)
	}
	info, err := dataInfo(dir)
	if err != nil {
		return nil, err
	}
	info.Description = "star schema: sales 720K rows, returns ~72K, demographics 1.9M, date_dim 3650, item 18K, store 100, region 5"
	s := &Suite{Name: "joins", Queries: joinsQueries, Data: info}
	for _, t := range joinsTables {
		s.Tables = append(s.Tables, Table{Name: t.name, Dir: filepath.Join(dir, t.name)})
	}
	return s, nil
}

// generateJoins writes each table of the star schema as one Parquet file under
// out/<table>/, in row groups of 64K rows.
func generateJoins(ctx context.Context, out string) error {
	c, err := duckdb.NewConnector("", nil)
	if err != nil {
		return fmt.Errorf("cannot open DuckDB: %w", err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	for _, t := range joinsTables {
		tdir := filepath.Join(out, t.name)
		if err := os.MkdirAll(tdir, 0o755); err != nil {
			return err
		}
		q := t.sql
		if t.name == "returns" {
			q = strings.Replace(q, "SALES_FILE", sqlString(filepath.Join(out, "sales", "part-0.parquet")), 1)
		}
		copyTo := fmt.Sprintf("COPY (%s) TO %s (FORMAT parquet, ROW_GROUP_SIZE 65536)", q, sqlString(filepath.Join(tdir, "part-0.parquet")))
		if _, err := db.ExecContext(ctx, copyTo); err != nil {
			return fmt.Errorf("cannot write %s: %w", t.name, err)
		}
	}
	return nil
}
