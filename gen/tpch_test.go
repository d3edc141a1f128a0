package gen

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

func genTPCH(t *testing.T, opts TPCHOptions) string {
	t.Helper()
	if opts.Out == "" {
		opts.Out = t.TempDir()
	}
	if err := TPCH(context.Background(), opts); err != nil {
		t.Fatalf("TPCH: %v", err)
	}
	return opts.Out
}

// tpchColumn reads one column of a generated table, over all its files in order,
// as int64 (integers, dates, decimals unscaled) or string values.
type tpchColumn struct {
	ints []int64
	strs []string
}

func readTPCH(t *testing.T, dir, table string) map[string]*tpchColumn {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, table, "part-*.parquet"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no files for %s: %v", table, err)
	}
	slices.Sort(files)
	cols := map[string]*tpchColumn{}
	for _, f := range files {
		tbl := readTable(t, f)
		want := TPCHSchemas[table]
		if tbl.Schema().NumFields() != want.NumFields() {
			t.Fatalf("%s: %d columns, want %d", f, tbl.Schema().NumFields(), want.NumFields())
		}
		for i, field := range tbl.Schema().Fields() {
			if field.Name != want.Field(i).Name || !arrow.TypeEqual(field.Type, want.Field(i).Type) {
				t.Fatalf("%s: column %d is %s %s, want %s %s", f, i, field.Name, field.Type, want.Field(i).Name, want.Field(i).Type)
			}
		}
		for i, field := range tbl.Schema().Fields() {
			c := cols[field.Name]
			if c == nil {
				c = &tpchColumn{}
				cols[field.Name] = c
			}
			for _, chunk := range tbl.Column(i).Data().Chunks() {
				if chunk.NullN() != 0 {
					t.Fatalf("%s.%s has NULLs", table, field.Name)
				}
				switch a := chunk.(type) {
				case *array.Int64:
					c.ints = append(c.ints, a.Int64Values()...)
				case *array.Int32:
					for _, v := range a.Int32Values() {
						c.ints = append(c.ints, int64(v))
					}
				case *array.Date32:
					for _, v := range a.Date32Values() {
						c.ints = append(c.ints, int64(v))
					}
				case *array.Decimal128:
					for j := range a.Len() {
						c.ints = append(c.ints, int64(a.Value(j).LowBits()))
					}
				case *array.String:
					for j := range a.Len() {
						c.strs = append(c.strs, a.Value(j))
					}
				default:
					t.Fatalf("%s.%s: unexpected %s", table, field.Name, chunk.DataType())
				}
			}
		}
	}
	return cols
}

func TestTPCHRowCountsAtSF1(t *testing.T) {
	got := TPCHRowCounts(1)
	want := TPCHCounts{Supplier: 10_000, Part: 200_000, PartSupp: 800_000, Customer: 150_000,
		Orders: 1_500_000, Nation: 25, Region: 5}
	if got != want {
		t.Fatalf("SF 1 counts %+v, want %+v", got, want)
	}
}

func TestTPCHDeterministic(t *testing.T) {
	a := genTPCH(t, TPCHOptions{SF: 0.01, Files: 2})
	b := genTPCH(t, TPCHOptions{SF: 0.01, Files: 2})
	for _, table := range TPCHTables {
		files, _ := filepath.Glob(filepath.Join(a, table, "*.parquet"))
		if len(files) == 0 {
			t.Fatalf("no files for %s", table)
		}
		for _, fa := range files {
			ba, err := os.ReadFile(fa)
			if err != nil {
				t.Fatal(err)
			}
			bb, err := os.ReadFile(filepath.Join(b, table, filepath.Base(fa)))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(ba, bb) {
				t.Errorf("%s/%s differs between two runs", table, filepath.Base(fa))
			}
		}
	}

	// The split into files does not change the rows.
	c := genTPCH(t, TPCHOptions{SF: 0.01, Files: 3})
	if n, _ := filepath.Glob(filepath.Join(c, "lineitem", "*.parquet")); len(n) != 3 {
		t.Fatalf("lineitem in %d files, want 3", len(n))
	}
	la, lc := readTPCH(t, a, "lineitem"), readTPCH(t, c, "lineitem")
	for _, col := range []string{"l_orderkey", "l_extendedprice", "l_shipdate"} {
		if !slices.Equal(la[col].ints, lc[col].ints) {
			t.Errorf("%s differs between 2 and 3 files", col)
		}
	}
	if !slices.Equal(la["l_comment"].strs, lc["l_comment"].strs) {
		t.Errorf("l_comment differs between 2 and 3 files")
	}

	// Another seed, other rows.
	d := genTPCH(t, TPCHOptions{SF: 0.01, Files: 2, Seed: 1})
	if slices.Equal(la["l_extendedprice"].ints, readTPCH(t, d, "lineitem")["l_extendedprice"].ints) {
		t.Errorf("seed 1 gives the same lineitem rows as seed 0")
	}

	// A rerun with fewer files leaves no stale part files behind.
	genTPCH(t, TPCHOptions{SF: 0.01, Files: 1, Out: c})
	if n, _ := filepath.Glob(filepath.Join(c, "orders", "*.parquet")); len(n) != 1 {
		t.Errorf("after a rerun with 1 file, orders has %d files", len(n))
	}
}

func TestTPCHInvalidOptions(t *testing.T) {
	for _, opts := range []TPCHOptions{
		{SF: 0, Out: t.TempDir()},
		{SF: -1, Out: t.TempDir()},
		{SF: 0.01},
		{SF: 0.0001, Files: 1000, Out: t.TempDir()},
	} {
		if err := TPCH(context.Background(), opts); err == nil {
			t.Errorf("TPCH(%+v) succeeded", opts)
		}
	}
}

// TestTPCHData checks row counts, keys and value domains at SF 0.01.
func TestTPCHData(t *testing.T) {
	dir := genTPCH(t, TPCHOptions{SF: 0.01, Files: 2})
	tables := map[string]map[string]*tpchColumn{}
	for _, tb := range TPCHTables {
		tables[tb] = readTPCH(t, dir, tb)
	}
	rows := func(table string) int64 {
		for _, c := range tables[table] {
			return int64(len(c.ints) + len(c.strs))
		}
		return 0
	}
	counts := TPCHRowCounts(0.01)
	for table, want := range map[string]int64{"supplier": 100, "part": 2000, "partsupp": 8000,
		"customer": 1500, "orders": 15_000, "nation": 25, "region": 5} {
		if got := rows(table); got != want {
			t.Errorf("%s: %d rows, want %d", table, got, want)
		}
	}
	if counts.Orders != 15_000 || counts.PartSupp != 8000 {
		t.Errorf("TPCHRowCounts(0.01) = %+v", counts)
	}
	// One to seven lines per order, four on average: about 60,000.
	if n := rows("lineitem"); n < 58_000 || n > 62_000 {
		t.Errorf("lineitem: %d rows, want about 60,000", n)
	}

	region, nation := tables["region"], tables["nation"]
	if !slices.Equal(region["r_name"].strs, regionNames) {
		t.Errorf("region names %v", region["r_name"].strs)
	}
	for i, k := range nation["n_nationkey"].ints {
		if k != int64(i) || nation["n_regionkey"].ints[i] < 0 || nation["n_regionkey"].ints[i] > 4 {
			t.Errorf("nation row %d: key %d region %d", i, k, nation["n_regionkey"].ints[i])
		}
	}

	// Keys: dense and unique where the specification says so.
	dense := func(name string, keys []int64) map[int64]bool {
		set := map[int64]bool{}
		for i, k := range keys {
			if k != int64(i+1) {
				t.Fatalf("%s row %d: key %d, want %d", name, i, k, i+1)
			}
			set[k] = true
		}
		return set
	}
	supp := tables["supplier"]
	suppliers := dense("supplier", supp["s_suppkey"].ints)
	parts := dense("part", tables["part"]["p_partkey"].ints)
	customers := dense("customer", tables["customer"]["c_custkey"].ints)

	ps := tables["partsupp"]
	pairs := map[[2]int64]int64{} // (part, supplier) -> supply cost
	for i, p := range ps["ps_partkey"].ints {
		s := ps["ps_suppkey"].ints[i]
		if !parts[p] || !suppliers[s] {
			t.Fatalf("partsupp row %d: (%d, %d) names a missing part or supplier", i, p, s)
		}
		if _, dup := pairs[[2]int64{p, s}]; dup {
			t.Fatalf("partsupp: (%d, %d) twice", p, s)
		}
		pairs[[2]int64{p, s}] = ps["ps_supplycost"].ints[i]
		if q := ps["ps_availqty"].ints[i]; q < 1 || q > 9999 {
			t.Errorf("ps_availqty %d", q)
		}
		if c := ps["ps_supplycost"].ints[i]; c < 100 || c > 100_000 {
			t.Errorf("ps_supplycost %d cents", c)
		}
	}

	ord := tables["orders"]
	orders := map[int64]int{} // key -> row
	for i, k := range ord["o_orderkey"].ints {
		if _, dup := orders[k]; dup {
			t.Fatalf("order key %d twice", k)
		}
		if (k-1)%32 >= 8 {
			t.Fatalf("order key %d is not sparse", k)
		}
		orders[k] = i
		c := ord["o_custkey"].ints[i]
		if !customers[c] || c%3 == 0 {
			t.Fatalf("order %d: customer %d missing or a multiple of 3", k, c)
		}
	}
	start, last := daysOf(1992, 1, 1), daysOf(1998, 8, 2)
	for _, d := range ord["o_orderdate"].ints {
		if d < int64(start) || d > int64(last) {
			t.Fatalf("o_orderdate %d out of range", d)
		}
	}

	li := tables["lineitem"]
	total := map[int64]int64{}
	statuses := map[int64]string{}
	prevOrder, prevLine := int64(0), int64(0)
	for i, ok := range li["l_orderkey"].ints {
		row, found := orders[ok]
		if !found {
			t.Fatalf("lineitem row %d: order %d missing", i, ok)
		}
		ln := li["l_linenumber"].ints[i]
		if ok == prevOrder && ln != prevLine+1 || ok != prevOrder && ln != 1 || ln > 7 {
			t.Fatalf("lineitem row %d: order %d line %d after line %d", i, ok, ln, prevLine)
		}
		prevOrder, prevLine = ok, ln
		p, s := li["l_partkey"].ints[i], li["l_suppkey"].ints[i]
		if _, ok := pairs[[2]int64{p, s}]; !ok {
			t.Fatalf("lineitem row %d: (%d, %d) not in partsupp", i, p, s)
		}
		qty, price := li["l_quantity"].ints[i], li["l_extendedprice"].ints[i]
		disc, tax := li["l_discount"].ints[i], li["l_tax"].ints[i]
		if qty < 100 || qty > 5000 || qty%100 != 0 {
			t.Fatalf("l_quantity %d (hundredths)", qty)
		}
		if price != qty/100*retailCents(p) {
			t.Fatalf("l_extendedprice %d for %d of part %d", price, qty/100, p)
		}
		if disc < 0 || disc > 10 || tax < 0 || tax > 8 {
			t.Fatalf("discount %d tax %d (hundredths)", disc, tax)
		}
		od := ord["o_orderdate"].ints[row]
		ship, commit, receipt := li["l_shipdate"].ints[i], li["l_commitdate"].ints[i], li["l_receiptdate"].ints[i]
		if ship < od+1 || ship > od+121 || commit < od+30 || commit > od+90 || receipt < ship+1 || receipt > ship+30 {
			t.Fatalf("lineitem row %d: order %d ship %d commit %d receipt %d", i, od, ship, commit, receipt)
		}
		flag, status := li["l_returnflag"].strs[i], li["l_linestatus"].strs[i]
		if receipt > int64(tpchCurrentDate) && flag != "N" || receipt <= int64(tpchCurrentDate) && flag != "R" && flag != "A" {
			t.Fatalf("return flag %q for receipt %d", flag, receipt)
		}
		if (ship > int64(tpchCurrentDate)) != (status == "O") {
			t.Fatalf("line status %q for ship date %d", status, ship)
		}
		total[ok] += (price*(100+tax)*(100-disc) + 5000) / 10000
		switch prev, seen := statuses[ok]; {
		case !seen:
			statuses[ok] = status
		case prev != status:
			statuses[ok] = "P"
		}
		if !slices.Contains(instructions, li["l_shipinstruct"].strs[i]) || !slices.Contains(shipModes, li["l_shipmode"].strs[i]) {
			t.Fatalf("lineitem row %d: instruction %q mode %q", i, li["l_shipinstruct"].strs[i], li["l_shipmode"].strs[i])
		}
	}
	for k, row := range orders {
		if got := ord["o_totalprice"].ints[row]; got != total[k] {
			t.Fatalf("order %d: total %d, lines sum to %d", k, got, total[k])
		}
		if got := ord["o_orderstatus"].strs[row]; got != statuses[k] {
			t.Fatalf("order %d: status %q, lines say %q", k, got, statuses[k])
		}
	}

	// Domains the 22 queries select on.
	part := tables["part"]
	types := map[string]bool{}
	for _, a := range typeSize {
		for _, b := range typeFinish {
			for _, c := range typeMaterial {
				types[a+" "+b+" "+c] = true
			}
		}
	}
	green := 0
	for i, name := range part["p_name"].strs {
		words := strings.Fields(name)
		if len(words) != 5 {
			t.Fatalf("p_name %q", name)
		}
		if strings.Contains(name, "green") {
			green++
		}
		if !types[part["p_type"].strs[i]] {
			t.Fatalf("p_type %q", part["p_type"].strs[i])
		}
		if sz := part["p_size"].ints[i]; sz < 1 || sz > 50 {
			t.Fatalf("p_size %d", sz)
		}
		m, brand := part["p_mfgr"].strs[i], part["p_brand"].strs[i]
		if !regexp.MustCompile(`^Manufacturer#[1-5]$`).MatchString(m) || brand[:6] != "Brand#" || brand[6] != m[13] || brand[7] < '1' || brand[7] > '5' {
			t.Fatalf("p_mfgr %q p_brand %q", m, brand)
		}
		if c := strings.Fields(part["p_container"].strs[i]); len(c) != 2 || !slices.Contains(containerSz, c[0]) || !slices.Contains(containerKd, c[1]) {
			t.Fatalf("p_container %q", part["p_container"].strs[i])
		}
	}
	if green < 20 {
		t.Errorf("only %d part names contain green", green)
	}
	complaints := 0
	for _, c := range supp["s_comment"].strs {
		if regexp.MustCompile(`Customer.*Complaints`).MatchString(c) {
			complaints++
		}
	}
	if complaints == 0 {
		t.Errorf("no supplier comment matches Customer%%Complaints")
	}
	special := 0
	for _, c := range ord["o_comment"].strs {
		if regexp.MustCompile(`special.*requests`).MatchString(c) {
			special++
		}
	}
	if special == 0 {
		t.Errorf("no order comment matches special%%requests")
	}
	cust := tables["customer"]
	for i, phone := range cust["c_phone"].strs {
		code := strconv.FormatInt(cust["c_nationkey"].ints[i]+10, 10)
		if !regexp.MustCompile(`^\d\d-\d\d\d-\d\d\d-\d\d\d\d$`).MatchString(phone) || phone[:2] != code {
			t.Fatalf("c_phone %q for nation %d", phone, cust["c_nationkey"].ints[i])
		}
		if b := cust["c_acctbal"].ints[i]; b < -99_999 || b > 999_999 {
			t.Fatalf("c_acctbal %d cents", b)
		}
		if !slices.Contains(segments, cust["c_mktsegment"].strs[i]) {
			t.Fatalf("c_mktsegment %q", cust["c_mktsegment"].strs[i])
		}
	}
}

// The schema types are those DuckDB's TPC-H tables use for money and dates.
func TestTPCHSchemaTypes(t *testing.T) {
	li := TPCHSchemas["lineitem"]
	for _, name := range []string{"l_quantity", "l_extendedprice", "l_discount", "l_tax"} {
		f, _ := li.FieldsByName(name)
		if len(f) != 1 || !arrow.TypeEqual(f[0].Type, &arrow.Decimal128Type{Precision: 15, Scale: 2}) {
			t.Errorf("%s: %v, want DECIMAL(15,2)", name, f)
		}
	}
	f, _ := li.FieldsByName("l_shipdate")
	if len(f) != 1 || f[0].Type.ID() != arrow.DATE32 {
		t.Errorf("l_shipdate: %v, want DATE", f)
	}
	if len(TPCHSchemas) != len(TPCHTables) {
		t.Errorf("%d schemas for %d tables", len(TPCHSchemas), len(TPCHTables))
	}
}
