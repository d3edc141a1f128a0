package gen

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/parquet"
)

// TPCHOptions configure TPCH.
type TPCHOptions struct {
	// SF is the scale factor: 1 gives about 6,001,215 lineitem rows. Required (> 0).
	SF float64
	// Out is the directory that receives one subdirectory per table. Required.
	Out string
	// Files is the number of files orders and lineitem are each split into (the
	// other tables are one file each). Default: 1. The rows do not depend on it.
	Files int
	// Seed selects the random streams; the same seed and scale factor give the
	// same rows. Default 0 is a valid seed.
	Seed int64
	// RowGroupRows is the number of rows per row group. Default: 1,048,576.
	RowGroupRows int
	// Progress, when set, is called as rows are written with the rows done so far
	// and the total over all tables. Calls are serialised.
	Progress func(done, total int64)
}

// TPCHTables are the eight TPC-H tables, in the order of the specification.
var TPCHTables = []string{"part", "supplier", "partsupp", "customer", "orders", "lineitem", "nation", "region"}

var (
	keyType   = arrow.PrimitiveTypes.Int64
	intType   = arrow.PrimitiveTypes.Int32
	moneyType = &arrow.Decimal128Type{Precision: 15, Scale: 2}
	strType   = arrow.BinaryTypes.String
	dateType  = arrow.FixedWidthTypes.Date32
)

func tpchSchema(cols ...any) *arrow.Schema {
	fs := make([]arrow.Field, 0, len(cols)/2)
	for i := 0; i < len(cols); i += 2 {
		fs = append(fs, arrow.Field{Name: cols[i].(string), Type: cols[i+1].(arrow.DataType)})
	}
	return arrow.NewSchema(fs, nil)
}

// TPCHSchemas are the tables' schemas: keys BIGINT, small counts INTEGER, money and
// quantities DECIMAL(15,2), dates DATE, text VARCHAR; no column is nullable.
var TPCHSchemas = map[string]*arrow.Schema{
	"region": tpchSchema("r_regionkey", keyType, "r_name", strType, "r_comment", strType),
	"nation": tpchSchema("n_nationkey", keyType, "n_name", strType, "n_regionkey", keyType, "n_comment", strType),
	"supplier": tpchSchema("s_suppkey", keyType, "s_name", strType, "s_address", strType, "s_nationkey", keyType,
		"s_phone", strType, "s_acctbal", moneyType, "s_comment", strType),
	"customer": tpchSchema("c_custkey", keyType, "c_name", strType, "c_address", strType, "c_nationkey", keyType,
		"c_phone", strType, "c_acctbal", moneyType, "c_mktsegment", strType, "c_comment", strType),
	"part": tpchSchema("p_partkey", keyType, "p_name", strType, "p_mfgr", strType, "p_brand", strType,
		"p_type", strType, "p_size", intType, "p_container", strType, "p_retailprice", moneyType, "p_comment", strType),
	"partsupp": tpchSchema("ps_partkey", keyType, "ps_suppkey", keyType, "ps_availqty", intType,
		"ps_supplycost", moneyType, "ps_comment", strType),
	"orders": tpchSchema("o_orderkey", keyType, "o_custkey", keyType, "o_orderstatus", strType,
		"o_totalprice", moneyType, "o_orderdate", dateType, "o_orderpriority", strType, "o_clerk", strType,
		"o_shippriority", intType, "o_comment", strType),
	"lineitem": tpchSchema("l_orderkey", keyType, "l_partkey", keyType, "l_suppkey", keyType, "l_linenumber", intType,
		"l_quantity", moneyType, "l_extendedprice", moneyType, "l_discount", moneyType, "l_tax", moneyType,
		"l_returnflag", strType, "l_linestatus", strType, "l_shipdate", dateType, "l_commitdate", dateType,
		"l_receiptdate", dateType, "l_shipinstruct", strType, "l_shipmode", strType, "l_comment", strType),
}

// TPCHCounts holds the row counts of one scale factor. Lineitem has no fixed count:
// every order has one to seven lines, about 4 * Orders in all.
type TPCHCounts struct {
	Supplier, Part, PartSupp, Customer, Orders, Nation, Region int64
}

// scaled is base*sf rounded, at least 1.
func scaled(base int64, sf float64) int64 {
	return max(1, int64(math.Round(float64(base)*sf)))
}

// TPCHRowCounts returns the row counts at scale factor sf.
func TPCHRowCounts(sf float64) TPCHCounts {
	c := TPCHCounts{
		Supplier: scaled(10_000, sf),
		Part:     scaled(200_000, sf),
		Customer: scaled(150_000, sf),
		Nation:   25,
		Region:   5,
	}
	c.PartSupp = 4 * c.Part
	c.Orders = 10 * c.Customer
	return c
}

// The date constants of the specification, as days since 1970-01-01.
var (
	tpchStartDate   = daysOf(1992, 1, 1)
	tpchEndDate     = daysOf(1998, 12, 31)
	tpchCurrentDate = daysOf(1995, 6, 17)
)

func daysOf(y int, m time.Month, d int) int32 {
	return int32(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// Value domains of the specification.
var (
	regionNames = []string{"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"}
	nationNames = []struct {
		name   string
		region int64
	}{
		{"ALGERIA", 0}, {"ARGENTINA", 1}, {"BRAZIL", 1}, {"CANADA", 1}, {"EGYPT", 4},
		{"ETHIOPIA", 0}, {"FRANCE", 3}, {"GERMANY", 3}, {"INDIA", 2}, {"INDONESIA", 2},
		{"IRAN", 4}, {"IRAQ", 4}, {"JAPAN", 2}, {"JORDAN", 4}, {"KENYA", 0},
		{"MOROCCO", 0}, {"MOZAMBIQUE", 0}, {"PERU", 1}, {"CHINA", 2}, {"ROMANIA", 3},
		{"SAUDI ARABIA", 4}, {"VIETNAM", 2}, {"RUSSIA", 3}, {"UNITED KINGDOM", 3}, {"UNITED STATES", 1},
	}
	partColors = []string{
		"almond", "antique", "aquamarine", "azure", "beige", "bisque", "black", "blanched", "blue",
		"blush", "brown", "burlywood", "burnished", "chartreuse", "chiffon", "chocolate", "coral",
		"cornflower", "cornsilk", "cream", "cyan", "dark", "deep", "dim", "dodger", "drab", "firebrick",
		"floral", "forest", "frosted", "gainsboro", "ghost", "goldenrod", "green", "grey", "honeydew",
		"hot", "indian", "ivory", "khaki", "lace", "lavender", "lawn", "lemon", "light", "lime", "linen",
		"magenta", "maroon", "medium", "metallic", "midnight", "mint", "misty", "moccasin", "navajo",
		"navy", "olive", "orange", "orchid", "pale", "papaya", "peach", "peru", "pink", "plum", "powder",
		"puff", "purple", "red", "rose", "rosy", "royal", "saddle", "salmon", "sandy", "seashell",
		"sienna", "sky", "slate", "smoke", "snow", "spring", "steel", "tan", "thistle", "tomato",
		"turquoise", "violet", "wheat", "white", "yellow",
	}
	typeSize     = []string{"STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"}
	typeFinish   = []string{"ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"}
	typeMaterial = []string{"TIN", "NICKEL", "BRASS", "STEEL", "COPPER"}
	containerSz  = []string{"SM", "LG", "MED", "JUMBO", "WRAP"}
	containerKd  = []string{"CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"}
	segments     = []string{"AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD"}
	priorities   = []string{"1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"}
	instructions = []string{"DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"}
	shipModes    = []string{"REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"}
)

// The comment grammar's word classes.
var (
	textNouns = []string{
		"foxes", "ideas", "theodolites", "pinto beans", "instructions", "dependencies", "excuses",
		"platelets", "asymptotes", "courts", "dolphins", "multipliers", "sauternes", "warthogs", "frets",
		"dinos", "attainments", "somas", "Tiresias", "patterns", "forges", "braids", "hockey players",
		"frays", "warhorses", "dugouts", "notornis", "epitaphs", "pearls", "tithes", "waters", "orbits",
		"gifts", "sheaves", "depths", "sentiments", "decoys", "realms", "pains", "grouches", "escapades",
		"accounts", "deposits", "packages", "requests", "requests", "accounts", "deposits", "packages",
	}
	textVerbs = []string{
		"sleep", "wake", "are", "cajole", "haggle", "nag", "use", "boost", "affix", "detect", "integrate",
		"maintain", "nod", "was", "lose", "sublate", "solve", "thrash", "promise", "engage", "hinder",
		"print", "x-ray", "breach", "eat", "grow", "impress", "mold", "poach", "serve", "run", "dazzle",
		"snooze", "doze", "unwind", "kindle", "play", "hang", "believe", "doubt",
	}
	textAdjectives = []string{
		"furious", "sly", "careful", "blithe", "quick", "fluffy", "slow", "quiet", "ruthless", "thin",
		"close", "dogged", "daring", "brave", "stealthy", "permanent", "enticing", "idle", "busy",
		"regular", "final", "ironic", "even", "bold", "silent", "pending", "special", "express", "unusual",
		"special", "regular", "final", "ironic", "even",
	}
	textAdverbs = []string{
		"sometimes", "always", "never", "furiously", "slyly", "carefully", "blithely", "quickly",
		"fluffily", "slowly", "quietly", "ruthlessly", "thinly", "closely", "doggedly", "daringly",
		"bravely", "stealthily", "permanently", "enticingly", "idly", "busily", "regularly", "finally",
		"ironically", "evenly", "boldly", "silently",
	}
	textPrepositions = []string{
		"about", "above", "according to", "across", "after", "against", "along", "alongside of",
		"among", "around", "at", "atop", "before", "behind", "beneath", "beside", "besides", "between",
		"beyond", "by", "despite", "during", "except", "for", "from", "in place of", "inside",
		"instead of", "into", "near", "of", "on", "outside", "over", "past", "since", "through",
		"throughout", "to", "toward", "under", "until", "up", "upon", "without", "with", "within",
	}
	textAuxiliaries = []string{
		"do", "may", "might", "shall", "will", "would", "can", "could", "should", "ought to", "must",
		"will have to", "shall have to", "could have to", "should have to", "must have to", "need to", "try to",
	}
	textTerminators = []string{".", ".", ".", ".", ";", ":", "?", "!", "--"}
)

// tpchPoolSize is the length of the text pool that comments are cut from; it must
// exceed the longest comment (198 characters) by far, so that comments vary.
const tpchPoolSize = 4 << 20

// textPool is a fixed run of grammatical nonsense sentences; every comment is a
// random slice of it. It is the same for every seed and scale factor.
var textPool = sync.OnceValue(func() string {
	r := rand.New(rand.NewPCG(0x7470636820746578, 0x7420706f6f6c2121))
	word := func(b []byte, ws []string) []byte {
		if len(b) > 0 {
			b = append(b, ' ')
		}
		return append(b, ws[r.IntN(len(ws))]...)
	}
	noun := func(b []byte) []byte {
		switch r.IntN(4) {
		case 1:
			b = word(b, textAdjectives)
		case 2:
			b = word(b, textAdjectives)
			b = append(b, ',')
			b = word(b, textAdjectives)
		case 3:
			b = word(b, textAdverbs)
			b = word(b, textAdjectives)
		}
		return word(b, textNouns)
	}
	verb := func(b []byte) []byte {
		switch r.IntN(4) {
		case 0:
			return word(b, textVerbs)
		case 1:
			return word(word(b, textAuxiliaries), textVerbs)
		case 2:
			return word(word(b, textVerbs), textAdverbs)
		}
		return word(word(word(b, textAuxiliaries), textVerbs), textAdverbs)
	}
	prep := func(b []byte) []byte {
		b = word(b, textPrepositions)
		b = append(b, " the"...)
		return noun(b)
	}
	b := make([]byte, 0, tpchPoolSize+256)
	for len(b) < tpchPoolSize {
		switch r.IntN(5) {
		case 0:
			b = verb(noun(b))
		case 1:
			b = prep(verb(noun(b)))
		case 2:
			b = noun(verb(noun(b)))
		case 3:
			b = noun(verb(prep(noun(b))))
		default:
			b = prep(verb(prep(noun(b))))
		}
		b = append(b, textTerminators[r.IntN(len(textTerminators))]...)
	}
	return string(b[:tpchPoolSize])
})

// rowRand is a random stream reseeded for every row from (seed, table, row), so a
// row's values depend on nothing else: not on the file split, the batch size or
// the order in which rows are generated.
type rowRand struct {
	seed uint64
	src  rand.PCG
	*rand.Rand
}

func newRowRand(seed int64, table uint64) *rowRand {
	r := &rowRand{seed: mix64(uint64(seed) ^ mix64(table))}
	r.Rand = rand.New(&r.src)
	return r
}

// mix64 is the splitmix64 finaliser: it spreads neighbouring inputs apart.
func mix64(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

func (r *rowRand) at(row int64) { r.src.Seed(r.seed, mix64(uint64(row))) }

// between draws uniformly from [lo, hi].
func (r *rowRand) between(lo, hi int64) int64 { return lo + r.Int64N(hi-lo+1) }

func (r *rowRand) pick(ws []string) string { return ws[r.IntN(len(ws))] }

// text cuts a comment of lo..hi characters from the pool.
func (r *rowRand) text(lo, hi int) string {
	n := lo + r.IntN(hi-lo+1)
	off := r.IntN(tpchPoolSize - n)
	return textPool()[off : off+n]
}

// address draws a string of lo..hi letters, digits, commas and spaces.
func (r *rowRand) address(lo, hi int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789, "
	b := make([]byte, lo+r.IntN(hi-lo+1))
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// phone is "CC-AAA-BBB-CCCC" with the nation's country code (nation key + 10).
func (r *rowRand) phone(nation int64) string {
	b := make([]byte, 0, 15)
	b = strconv.AppendInt(b, nation+10, 10)
	b = append(b, '-')
	b = strconv.AppendInt(b, r.between(100, 999), 10)
	b = append(b, '-')
	b = strconv.AppendInt(b, r.between(100, 999), 10)
	b = append(b, '-')
	b = strconv.AppendInt(b, r.between(1000, 9999), 10)
	return string(b)
}

// Stream identifiers of the tables.
const (
	streamRegion = iota + 1
	streamNation
	streamSupplier
	streamCustomer
	streamPart
	streamPartSupp
	streamOrders
)

// tpchGen generates the rows of one scale factor.
type tpchGen struct {
	counts TPCHCounts
	seed   int64
	// complaints and recommends are the suppliers whose comments carry the
	// "Customer … Complaints" / "Customer … Recommends" phrases.
	complaints, recommends map[int64]bool
}

func newTPCHGen(sf float64, seed int64) *tpchGen {
	g := &tpchGen{counts: TPCHRowCounts(sf), seed: seed,
		complaints: map[int64]bool{}, recommends: map[int64]bool{}}
	// At least one of each, so that the queries that look for them find something.
	n := max(1, int64(math.Round(5*sf)))
	r := newRowRand(seed, 0xC0)
	r.at(0)
	for int64(len(g.complaints)) < min(n, g.counts.Supplier) {
		g.complaints[r.between(1, g.counts.Supplier)] = true
	}
	for int64(len(g.recommends)) < min(n, g.counts.Supplier-int64(len(g.complaints))) {
		if k := r.between(1, g.counts.Supplier); !g.complaints[k] {
			g.recommends[k] = true
		}
	}
	return g
}

// retailCents is the part's retail price in cents, a function of its key.
func retailCents(partkey int64) int64 {
	return 90000 + (partkey/10)%20001 + 100*(partkey%1000)
}

// partSupplier is the i-th (0..3) supplier of a part, spread so that the four are
// distinct and every supplier supplies about the same number of parts.
func partSupplier(partkey int64, i, suppliers int64) int64 {
	return (partkey+i*(suppliers/4+(partkey-1)/suppliers))%suppliers + 1
}

// orderKey makes order keys sparse: of each 32 keys, only the first 8 are used.
func orderKey(idx int64) int64 { return (idx/8)*32 + idx%8 + 1 }

type tpchLine struct {
	partkey, suppkey           int64
	quantity, price, disc, tax int64 // quantity in units, the rest in cents
	ship, commit, receipt      int32
	returnflag, linestatus     string
	instruct, mode, comment    string
	netCents                   int64
}

type tpchOrder struct {
	key, custkey int64
	date         int32
	priority     string
	clerk        int64
	comment      string
	status       string
	totalCents   int64
	lines        [7]tpchLine
	nlines       int
}

// order draws order idx (0-based) with its lines.
func (g *tpchGen) order(r *rowRand, idx int64, o *tpchOrder) {
	r.at(idx)
	o.key = orderKey(idx)
	// Only customers whose key is not a multiple of 3 place orders, so that a third
	// of the customers have none: j -> the j-th such key.
	eligible := g.counts.Customer - g.counts.Customer/3
	j := r.Int64N(eligible)
	o.custkey = j + j/2 + 1
	o.date = tpchStartDate + int32(r.between(0, int64(tpchEndDate-151-tpchStartDate)))
	o.priority = r.pick(priorities)
	o.clerk = r.between(1, max(1, g.counts.Supplier/10))
	o.comment = r.text(19, 78)
	o.nlines = int(r.between(1, 7))
	o.totalCents = 0
	nf, no := 0, 0
	for i := range o.nlines {
		l := &o.lines[i]
		l.partkey = r.between(1, g.counts.Part)
		l.suppkey = partSupplier(l.partkey, r.between(0, 3), g.counts.Supplier)
		l.quantity = r.between(1, 50)
		l.price = l.quantity * retailCents(l.partkey)
		l.disc = r.between(0, 10)
		l.tax = r.between(0, 8)
		l.ship = o.date + int32(r.between(1, 121))
		l.commit = o.date + int32(r.between(30, 90))
		l.receipt = l.ship + int32(r.between(1, 30))
		flag := "RA"[r.IntN(2):][:1]
		if l.receipt > tpchCurrentDate {
			flag = "N"
		}
		l.returnflag = flag
		if l.ship > tpchCurrentDate {
			l.linestatus = "O"
			no++
		} else {
			l.linestatus = "F"
			nf++
		}
		l.instruct = r.pick(instructions)
		l.mode = r.pick(shipModes)
		l.comment = r.text(10, 43)
		// price * (1+tax) * (1-discount), rounded to the cent.
		l.netCents = (l.price*(100+l.tax)*(100-l.disc) + 5000) / 10000
		o.totalCents += l.netCents
	}
	switch {
	case nf == o.nlines:
		o.status = "F"
	case no == o.nlines:
		o.status = "O"
	default:
		o.status = "P"
	}
}

// tpchJob writes rows [lo, hi) of a table (for orders and lineitem: orders lo..hi)
// to one file.
type tpchJob struct {
	table  string
	file   int
	lo, hi int64
	weight int64 // rows written, for progress
}

// tpchBatch is the number of rows (orders, for lineitem) per Arrow record.
const tpchBatch = 16 * 1024

// TPCH writes the eight TPC-H tables at scale factor opts.SF as Parquet (ZSTD) under
// opts.Out/<table>/part-NNNNN.parquet: orders and lineitem in opts.Files files each,
// split by order, the rest in one file. The rows are a function of (SF, Seed) only.
// Stale part files of an earlier run with more files are removed.
func TPCH(ctx context.Context, opts TPCHOptions) error {
	if !(opts.SF > 0) || opts.SF > 1e5 {
		return errs.New(errs.Analysis, "gen tpch: scale factor must be positive, got %v", opts.SF)
	}
	if opts.Out == "" {
		return errs.New(errs.Analysis, "gen tpch: an output directory is required")
	}
	if opts.Files <= 0 {
		opts.Files = 1
	}
	g := newTPCHGen(opts.SF, opts.Seed)
	c := g.counts
	if int64(opts.Files) > c.Orders {
		return errs.New(errs.Analysis, "gen tpch: %d files for %d orders: every file needs an order", opts.Files, c.Orders)
	}
	if opts.RowGroupRows <= 0 {
		opts.RowGroupRows = parquet.WriteDefaultRowGroupRows
	}

	var jobs []tpchJob
	for k := range opts.Files {
		lo, hi := c.Orders*int64(k)/int64(opts.Files), c.Orders*int64(k+1)/int64(opts.Files)
		jobs = append(jobs, tpchJob{"lineitem", k, lo, hi, 4 * (hi - lo)}, tpchJob{"orders", k, lo, hi, hi - lo})
	}
	for _, j := range []tpchJob{
		{table: "partsupp", hi: c.Part, weight: c.PartSupp},
		{table: "part", hi: c.Part, weight: c.Part},
		{table: "customer", hi: c.Customer, weight: c.Customer},
		{table: "supplier", hi: c.Supplier, weight: c.Supplier},
		{table: "nation", hi: c.Nation, weight: c.Nation},
		{table: "region", hi: c.Region, weight: c.Region},
	} {
		jobs = append(jobs, j)
	}
	// Largest first, so that the long files start early.
	slices.SortStableFunc(jobs, func(a, b tpchJob) int { return int(b.weight - a.weight) })
	var total int64
	for _, j := range jobs {
		total += j.weight
	}
	for _, t := range TPCHTables {
		if err := os.MkdirAll(filepath.Join(opts.Out, t), 0o755); err != nil {
			return fmt.Errorf("cannot create %q: %w", filepath.Join(opts.Out, t), err)
		}
	}

	var (
		mu   sync.Mutex
		done int64
	)
	report := func(n int64) {
		if opts.Progress == nil {
			return
		}
		mu.Lock()
		done = min(done+n, total)
		opts.Progress(done, total)
		mu.Unlock()
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan tpchJob)
	errc := make(chan error, len(jobs))
	var wg sync.WaitGroup
	for range min(len(jobs), runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				if err := g.write(ctx, opts, j, report); err != nil {
					errc <- err
					cancel()
				}
			}
		}()
	}
feed:
	for _, j := range jobs {
		select {
		case next <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, t := range []string{"orders", "lineitem"} {
		if err := removeStaleParts(filepath.Join(opts.Out, t), opts.Files); err != nil {
			return err
		}
	}
	for _, t := range TPCHTables {
		if t != "orders" && t != "lineitem" {
			if err := removeStaleParts(filepath.Join(opts.Out, t), 1); err != nil {
				return err
			}
		}
	}
	return nil
}

// write writes one job's file. Rows are built in a second goroutine while the
// previous batch is encoded, so that even a single large file uses two cores.
func (g *tpchGen) write(ctx context.Context, opts TPCHOptions, j tpchJob, report func(int64)) error {
	schema := TPCHSchemas[j.table]
	path := filepath.Join(opts.Out, j.table, EventsFileName(j.file))
	fill := g.filler(j.table)
	err := parquet.WriteFile(path, schema, func(emit func(arrow.Record) error) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		recs := make(chan arrow.Record, 2)
		go func() {
			defer close(recs)
			b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
			defer b.Release()
			for lo := j.lo; lo < j.hi; lo += tpchBatch {
				fill(b, lo, min(lo+tpchBatch, j.hi))
				select {
				case recs <- b.NewRecord():
				case <-ctx.Done():
					return
				}
			}
		}()
		defer func() {
			cancel()
			for rec := range recs { // let the producer finish
				rec.Release()
			}
		}()
		for rec := range recs {
			err := ctx.Err()
			if err == nil {
				err = emit(rec)
			}
			n := rec.NumRows()
			rec.Release()
			if err != nil {
				return err
			}
			report(n)
		}
		return ctx.Err()
	}, parquet.WriteOptions{RowGroupRows: int64(opts.RowGroupRows)})
	if err != nil {
		return fmt.Errorf("cannot write %s file %d: %w", j.table, j.file, err)
	}
	return nil
}

// filler returns the function that appends rows [lo, hi) of a table to b.
func (g *tpchGen) filler(table string) func(b *array.RecordBuilder, lo, hi int64) {
	switch table {
	case "region":
		r := newRowRand(g.seed, streamRegion)
		return func(b *array.RecordBuilder, lo, hi int64) {
			for i := lo; i < hi; i++ {
				r.at(i)
				b.Field(0).(*array.Int64Builder).Append(i)
				b.Field(1).(*array.StringBuilder).Append(regionNames[i])
				b.Field(2).(*array.StringBuilder).Append(r.text(31, 115))
			}
		}
	case "nation":
		r := newRowRand(g.seed, streamNation)
		return func(b *array.RecordBuilder, lo, hi int64) {
			for i := lo; i < hi; i++ {
				r.at(i)
				b.Field(0).(*array.Int64Builder).Append(i)
				b.Field(1).(*array.StringBuilder).Append(nationNames[i].name)
				b.Field(2).(*array.Int64Builder).Append(nationNames[i].region)
				b.Field(3).(*array.StringBuilder).Append(r.text(31, 114))
			}
		}
	case "supplier":
		r := newRowRand(g.seed, streamSupplier)
		return func(b *array.RecordBuilder, lo, hi int64) {
			for i := lo; i < hi; i++ {
				r.at(i)
				key := i + 1
				nation := r.between(0, 24)
				b.Field(0).(*array.Int64Builder).Append(key)
				b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("Supplier#%09d", key))
				b.Field(2).(*array.StringBuilder).Append(r.address(10, 40))
				b.Field(3).(*array.Int64Builder).Append(nation)
				b.Field(4).(*array.StringBuilder).Append(r.phone(nation))
				b.Field(5).(*array.Decimal128Builder).Append(decimal128.FromI64(r.between(-99_999, 999_999)))
				comment := r.text(25, 100)
				switch {
				case g.complaints[key]:
					comment = r.betterBusiness(comment, "Complaints")
				case g.recommends[key]:
					comment = r.betterBusiness(comment, "Recommends")
				}
				b.Field(6).(*array.StringBuilder).Append(comment)
			}
		}
	case "customer":
		r := newRowRand(g.seed, streamCustomer)
		return func(b *array.RecordBuilder, lo, hi int64) {
			for i := lo; i < hi; i++ {
				r.at(i)
				key := i + 1
				nation := r.between(0, 24)
				b.Field(0).(*array.Int64Builder).Append(key)
				b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("Customer#%09d", key))
				b.Field(2).(*array.StringBuilder).Append(r.address(10, 40))
				b.Field(3).(*array.Int64Builder).Append(nation)
				b.Field(4).(*array.StringBuilder).Append(r.phone(nation))
				b.Field(5).(*array.Decimal128Builder).Append(decimal128.FromI64(r.between(-99_999, 999_999)))
				b.Field(6).(*array.StringBuilder).Append(r.pick(segments))
				b.Field(7).(*array.StringBuilder).Append(r.text(29, 116))
			}
		}
	case "part":
		r := newRowRand(g.seed, streamPart)
		var name []byte
		var picked [5]int
		return func(b *array.RecordBuilder, lo, hi int64) {
			for i := lo; i < hi; i++ {
				r.at(i)
				key := i + 1
				// Five distinct colours.
				name = name[:0]
				for w := range 5 {
				again:
					c := r.IntN(len(partColors))
					if slices.Contains(picked[:w], c) {
						goto again
					}
					picked[w] = c
					if w > 0 {
						name = append(name, ' ')
					}
					name = append(name, partColors[c]...)
				}
				m := r.between(1, 5)
				brand := m*10 + r.between(1, 5)
				b.Field(0).(*array.Int64Builder).Append(key)
				b.Field(1).(*array.StringBuilder).BinaryBuilder.Append(name)
				b.Field(2).(*array.StringBuilder).Append("Manufacturer#" + strconv.FormatInt(m, 10))
				b.Field(3).(*array.StringBuilder).Append("Brand#" + strconv.FormatInt(brand, 10))
				b.Field(4).(*array.StringBuilder).Append(r.pick(typeSize) + " " + r.pick(typeFinish) + " " + r.pick(typeMaterial))
				b.Field(5).(*array.Int32Builder).Append(int32(r.between(1, 50)))
				b.Field(6).(*array.StringBuilder).Append(r.pick(containerSz) + " " + r.pick(containerKd))
				b.Field(7).(*array.Decimal128Builder).Append(decimal128.FromI64(retailCents(key)))
				b.Field(8).(*array.StringBuilder).Append(r.text(5, 22))
			}
		}
	case "partsupp":
		r := newRowRand(g.seed, streamPartSupp)
		return func(b *array.RecordBuilder, lo, hi int64) {
			for i := lo; i < hi; i++ {
				key := i + 1
				for s := range int64(4) {
					r.at(4*i + s)
					b.Field(0).(*array.Int64Builder).Append(key)
					b.Field(1).(*array.Int64Builder).Append(partSupplier(key, s, g.counts.Supplier))
					b.Field(2).(*array.Int32Builder).Append(int32(r.between(1, 9999)))
					b.Field(3).(*array.Decimal128Builder).Append(decimal128.FromI64(r.between(100, 100_000)))
					b.Field(4).(*array.StringBuilder).Append(r.text(49, 198))
				}
			}
		}
	case "orders":
		r := newRowRand(g.seed, streamOrders)
		var o tpchOrder
		clerk := []byte("Clerk#")
		return func(b *array.RecordBuilder, lo, hi int64) {
			for i := lo; i < hi; i++ {
				g.order(r, i, &o)
				b.Field(0).(*array.Int64Builder).Append(o.key)
				b.Field(1).(*array.Int64Builder).Append(o.custkey)
				b.Field(2).(*array.StringBuilder).Append(o.status)
				b.Field(3).(*array.Decimal128Builder).Append(decimal128.FromI64(o.totalCents))
				b.Field(4).(*array.Date32Builder).Append(arrow.Date32(o.date))
				b.Field(5).(*array.StringBuilder).Append(o.priority)
				clerk = appendPadded(clerk[:6], o.clerk, 9)
				b.Field(6).(*array.StringBuilder).BinaryBuilder.Append(clerk)
				b.Field(7).(*array.Int32Builder).Append(0)
				b.Field(8).(*array.StringBuilder).Append(o.comment)
			}
		}
	case "lineitem":
		r := newRowRand(g.seed, streamOrders)
		var o tpchOrder
		return func(b *array.RecordBuilder, lo, hi int64) {
			okB := b.Field(0).(*array.Int64Builder)
			pkB := b.Field(1).(*array.Int64Builder)
			skB := b.Field(2).(*array.Int64Builder)
			lnB := b.Field(3).(*array.Int32Builder)
			qB := b.Field(4).(*array.Decimal128Builder)
			epB := b.Field(5).(*array.Decimal128Builder)
			dB := b.Field(6).(*array.Decimal128Builder)
			tB := b.Field(7).(*array.Decimal128Builder)
			rfB := b.Field(8).(*array.StringBuilder)
			lsB := b.Field(9).(*array.StringBuilder)
			sdB := b.Field(10).(*array.Date32Builder)
			cdB := b.Field(11).(*array.Date32Builder)
			rdB := b.Field(12).(*array.Date32Builder)
			siB := b.Field(13).(*array.StringBuilder)
			smB := b.Field(14).(*array.StringBuilder)
			cB := b.Field(15).(*array.StringBuilder)
			for i := lo; i < hi; i++ {
				g.order(r, i, &o)
				for n := range o.nlines {
					l := &o.lines[n]
					okB.Append(o.key)
					pkB.Append(l.partkey)
					skB.Append(l.suppkey)
					lnB.Append(int32(n + 1))
					qB.Append(decimal128.FromI64(l.quantity * 100))
					epB.Append(decimal128.FromI64(l.price))
					dB.Append(decimal128.FromI64(l.disc))
					tB.Append(decimal128.FromI64(l.tax))
					rfB.Append(l.returnflag)
					lsB.Append(l.linestatus)
					sdB.Append(arrow.Date32(l.ship))
					cdB.Append(arrow.Date32(l.commit))
					rdB.Append(arrow.Date32(l.receipt))
					siB.Append(l.instruct)
					smB.Append(l.mode)
					cB.Append(l.comment)
				}
			}
		}
	}
	panic("BUG: no TPC-H table " + table)
}

// appendPadded appends v zero-padded to width digits.
func appendPadded(b []byte, v int64, width int) []byte {
	var d [20]byte
	s := strconv.AppendInt(d[:0], v, 10)
	for range width - len(s) {
		b = append(b, '0')
	}
	return append(b, s...)
}

// betterBusiness puts "Customer … <word>" into a supplier comment at a random place.
func (r *rowRand) betterBusiness(comment, word string) string {
	a := r.IntN(len(comment) + 1)
	b := a + r.IntN(len(comment)-a+1)
	return comment[:a] + "Customer " + comment[a:b] + word + comment[b:]
}
