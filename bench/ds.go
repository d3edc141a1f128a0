package main

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// DSConfig sizes the decision-support (TPC-DS-shaped) suite's data.
type DSConfig struct {
	// SF scales the fact tables as TPC-DS's scale factor does: store_sales holds
	// about 2.88M rows at SF 1.
	SF float64
	// DataDir holds the cached data sets (one directory per size).
	DataDir string
}

//go:embed queries/ds/*.sql
var dsFS embed.FS

// dsMacros are the DuckDB macros the generator's SQL uses. Every value is a hash of
// the row number and a salt, so that the data is the same on every run and the
// columns of one row are independent of each other.
var dsMacros = []string{
	// pk picks 0..n-1.
	`CREATE MACRO pk(i, s, n) AS (hash(i::BIGINT * 7919 + s) % n::UBIGINT)::BIGINT`,
	// fk is a foreign key 1..n, NULL in one row of 50 as TPC-DS leaves some unknown.
	`CREATE MACRO fk(i, s, n) AS CASE WHEN hash(i::BIGINT * 7919 + s + 100003) % 50 = 0 THEN NULL
		ELSE (hash(i::BIGINT * 7919 + s) % n::UBIGINT)::BIGINT + 1 END`,
	// money is a price between lo and hi with cents.
	`CREATE MACRO money(i, s, lo, hi) AS (lo + (hash(i::BIGINT * 7919 + s) % ((hi - lo) * 100)::UBIGINT)::BIGINT / 100.0)::DECIMAL(7,2)`,
	// pickl picks an element of a list.
	`CREATE MACRO pickl(i, s, l) AS l[pk(i, s, len(l)) + 1]`,
	// sid is a TPC-DS business key: 16 letters.
	`CREATE MACRO sid(k) AS 'AAAAAAAA' || upper(lpad(format('{:x}', k::BIGINT), 8, 'A'))`,
}

// dsLists are the value domains the dimensions draw from, named in the SQL as
// {name}.
var dsLists = map[string][]string{
	"states": {"AK", "AL", "AR", "AZ", "CA", "CO", "CT", "DC", "DE", "FL", "GA", "HI", "IA", "ID", "IL", "IN", "KS", "KY",
		"LA", "MA", "MD", "ME", "MI", "MN", "MO", "MS", "MT", "NC", "ND", "NE", "NH", "NJ", "NM", "NV", "NY", "OH", "OK",
		"OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VA", "VT", "WA", "WI", "WV", "WY"},
	"counties": {"Williamson County", "Ziebach County", "Walker County", "Franklin Parish", "Luce County", "Richland County",
		"Bronx County", "Orange County", "Fairfield County", "Barrow County", "Daviess County", "Jackson County",
		"Huron County", "Kittitas County", "Mobile County", "Maverick County", "Dona Ana County", "Pennington County",
		"Furnas County", "Mesa County", "Levy County", "Jefferson Davis Parish"},
	"cities": {"Midway", "Fairview", "Oak Grove", "Five Points", "Pleasant Hill", "Riverside", "Centerville", "Salem",
		"Georgetown", "Greenwood", "Union", "Springfield", "Clinton", "Oakland", "Mount Olive", "Lebanon", "Newport",
		"Franklin", "Glendale", "Liberty", "Edgewood", "Hopewell", "Bethel", "Shiloh", "Sulphur Springs"},
	"streets":      {"Main", "Oak", "Park", "Elm", "Maple", "Cedar", "Hill", "Lake", "Pine", "View", "Sunset", "Washington", "Lincoln", "Jackson", "Church", "Spring", "Ridge", "River", "Mill", "Forest"},
	"street_types": {"Street", "Avenue", "Blvd", "Road", "Drive", "Lane", "Court", "Way", "Parkway", "Circle", "Ct.", "Ln", "RD", "ST", "Wy"},
	"first_names":  {"James", "Mary", "John", "Patricia", "Robert", "Jennifer", "Michael", "Linda", "William", "Elizabeth", "David", "Barbara", "Richard", "Susan", "Joseph", "Jessica", "Thomas", "Sarah", "Charles", "Karen", "Daniel", "Nancy", "Matthew", "Lisa", "Anthony", "Betty", "Mark", "Sandra", "Donald", "Ashley"},
	"last_names":   {"Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Rodriguez", "Martinez", "Hernandez", "Lopez", "Gonzalez", "Wilson", "Anderson", "Thomas", "Taylor", "Moore", "Jackson", "Martin", "Lee", "Perez", "Thompson", "White", "Harris", "Sanchez", "Clark", "Ramirez", "Lewis", "Robinson", "Walker", "Young", "Allen", "King", "Wright"},
	"salutations":  {"Mr.", "Mrs.", "Ms.", "Miss", "Dr.", "Sir"},
	"countries":    {"UNITED STATES", "CANADA", "MEXICO", "GERMANY", "FRANCE", "JAPAN", "CHINA", "BRAZIL", "INDIA", "ITALY", "SPAIN", "CHILE", "PERU", "KENYA", "EGYPT"},
	"colors": {"almond", "antique", "aquamarine", "azure", "beige", "bisque", "black", "blanched", "blue", "blush", "brown",
		"burlywood", "burnished", "chartreuse", "chiffon", "chocolate", "coral", "cornflower", "cornsilk", "cream", "cyan",
		"dark", "deep", "dim", "dodger", "drab", "firebrick", "floral", "forest", "frosted", "gainsboro", "ghost", "goldenrod",
		"green", "grey", "honeydew", "hot", "indian", "ivory", "khaki", "lace", "lavender", "lawn", "lemon", "light", "lime",
		"linen", "magenta", "maroon", "medium", "metallic", "midnight", "mint", "misty", "moccasin", "navajo", "navy", "olive",
		"orange", "orchid", "pale", "papaya", "peach", "peru", "pink", "plum", "powder", "puff", "purple", "red", "rose",
		"rosy", "royal", "saddle", "salmon", "sandy", "seashell", "sienna", "sky", "slate", "smoke", "snow", "spring", "steel",
		"tan", "thistle", "tomato", "turquoise", "violet", "wheat", "white", "yellow"},
	"units":      {"Each", "Dozen", "Case", "Pallet", "Gross", "Carton", "Box", "Bunch", "Bundle", "Oz", "Lb", "Ton", "Ounce", "Pound", "Tsp", "Tbl", "Cup", "Dram", "Gram", "N/A"},
	"sizes":      {"petite", "small", "medium", "large", "extra large", "economy", "N/A"},
	"containers": {"Unknown"},
	"brand_words": {"amalgamalg", "amalgbrand", "amalgcorp", "amalgedu pack", "amalgexporti", "amalgimporto", "amalgmaxi",
		"amalgnameless", "amalgunivamalg", "brandbrand", "corpbrand", "edu packamalg", "exportiamalg", "exportiimporto",
		"importoamalg", "importobrand", "maxibrand", "namelessbrand", "scholaramalgamalg", "univbrand"},
	"manufacts":     {"able", "ought", "pri", "ese", "anti", "cally", "ation", "eing", "bar", "n st", "oughtought", "ableought", "priought", "eseought", "antiought"},
	"store_names":   {"ought", "able", "pri", "ese", "anti", "cally", "ation", "eing", "bar", "n st"},
	"buy_potential": {">10000", "5001-10000", "1001-5000", "501-1000", "0-500", "Unknown"},
	"ship_types":    {"EXPRESS", "NEXT DAY", "OVERNIGHT", "TWO DAY", "REGULAR", "LIBRARY"},
	"ship_codes":    {"AIR", "SURFACE", "SEA", "BIKE", "HAND CARRY"},
	"carriers": {"UPS", "FEDEX", "AIRBORNE", "DHL", "ZOUROS", "MSC", "LATVIAN", "ALLIANCE", "ORIENTAL", "BARIAN", "BOXBUNDLES",
		"GREAT EASTERN", "DIAMOND", "RUPEKSA", "GERMA", "HARMSTORF", "PRIVATECARRIER", "USPS", "TBS", "ZHOU"},
	"reasons": {"Package was damaged", "Stopped working", "Did not get it on time", "Not the product that was ordred",
		"Parts missing", "Does not work with a product that I have", "Gift exchange", "Did not like the color",
		"Did not like the model", "Did not like the make", "Did not like the warranty", "No service location in my area",
		"Found a better price in a store", "Found a better extended warranty in a store", "Not working any more",
		"Did not fit", "Wrong size", "Lost my job", "unauthoized purchase", "duplicate purchase", "its is a boy",
		"it is a girl", "reason 23", "reason 24", "reason 25", "reason 26", "reason 27", "reason 28", "reason 29",
		"reason 30", "reason 31", "reason 32", "reason 33", "reason 34", "reason 35"},
	"cc_names":    {"NY Metro", "Mid Atlantic", "North Midwest", "Pacific Northwest", "California", "Hawaii/Alaska"},
	"location":    {"apartment", "condo", "single family"},
	"web_pages":   {"ad", "bi-annual", "dynamic", "feedback", "general", "order", "protected", "quarterly", "welcome"},
	"companies":   {"pri", "ought", "able", "ese", "anti", "cally"},
	"page_types":  {"bi-annual", "monthly", "quarterly"},
	"departments": {"DEPARTMENT"},
}

// dsCategories are the item categories and their classes, as TPC-DS names them.
var dsCategories = []struct {
	name    string
	classes []string
}{
	{"Women", []string{"dresses", "fragrances", "maternity", "swimwear"}},
	{"Men", []string{"accessories", "pants", "shirts", "sports-apparel"}},
	{"Children", []string{"infants", "newborn", "school-uniforms", "toddlers"}},
	{"Shoes", []string{"athletic", "kids", "mens", "womens"}},
	{"Music", []string{"classical", "country", "pop", "rock"}},
	{"Jewelry", []string{"birdal", "bracelets", "costume", "diamonds", "earings", "estate"}},
	{"Home", []string{"accent", "bathroom", "bedding", "decor", "furniture", "kids", "lighting", "wallpaper"}},
	{"Sports", []string{"archery", "athletic shoes", "baseball", "camping", "fishing", "football", "golf", "outdoor"}},
	{"Books", []string{"arts", "business", "computers", "cooking", "fiction", "history", "reference", "self-help"}},
	{"Electronics", []string{"audio", "cameras", "camcorders", "musical", "personal", "portable", "stereo", "televisions"}},
}

// dsSizes are the table sizes at scale factor sf: the facts scale linearly, the
// people and items slower, the small dimensions not at all.
func dsSizes(sf float64) map[string]int64 {
	lin := func(n float64, least int64) int64 { return max(least, int64(math.Round(n*sf))) }
	sub := func(n float64, least int64) int64 { return max(least, int64(math.Round(n*math.Sqrt(sf)))) }
	return map[string]int64{
		"store_sales":   lin(2_880_000, 4000),
		"catalog_sales": lin(1_440_000, 2000),
		"web_sales":     lin(720_000, 1000),
		"customer":      sub(100_000, 1000),
		"address":       sub(50_000, 500),
		"item":          sub(18_000, 400),
		"cdemo":         min(1_920_800, sub(1_920_800, 11_200)),
		"inv_items":     sub(4_000, 100),
	}
}

// dsTables are the 24 TPC-DS tables as DuckDB SQL over range(): {n:key} is a size
// from dsSizes, {list} a value domain from dsLists, {categories} and
// {classes} the item hierarchy. The returns read the sales files written before
// them ({file:table}).
var dsTables = []struct{ name, sql string }{
	{"date_dim", `SELECT (2415022 + i)::INTEGER AS d_date_sk, sid(2415022 + i) AS d_date_id, d AS d_date,
		((year(d) - 1900) * 12 + month(d) - 1)::INTEGER AS d_month_seq, ((i + 2) // 7 + 1)::INTEGER AS d_week_seq,
		((year(d) - 1900) * 4 + quarter(d))::INTEGER AS d_quarter_seq, year(d)::INTEGER AS d_year,
		dayofweek(d)::INTEGER AS d_dow, month(d)::INTEGER AS d_moy, day(d)::INTEGER AS d_dom, quarter(d)::INTEGER AS d_qoy,
		year(d)::INTEGER AS d_fy_year, ((year(d) - 1900) * 4 + quarter(d))::INTEGER AS d_fy_quarter_seq,
		((i + 2) // 7 + 1)::INTEGER AS d_fy_week_seq, dayname(d) AS d_day_name, year(d) || 'Q' || quarter(d) AS d_quarter_name,
		CASE WHEN (month(d) = 12 AND day(d) = 25) OR (month(d) = 1 AND day(d) = 1) OR (month(d) = 7 AND day(d) = 4) THEN 'Y' ELSE 'N' END AS d_holiday,
		CASE WHEN dayofweek(d) IN (0, 6) THEN 'Y' ELSE 'N' END AS d_weekend,
		CASE WHEN (month(d) = 12 AND day(d) = 26) OR (month(d) = 1 AND day(d) = 2) OR (month(d) = 7 AND day(d) = 5) THEN 'Y' ELSE 'N' END AS d_following_holiday,
		(2415022 + i - day(d) + 1)::INTEGER AS d_first_dom, (2415022 + i - day(d) + day(last_day(d)))::INTEGER AS d_last_dom,
		(2415022 + i - 365)::INTEGER AS d_same_day_ly, (2415022 + i - 91)::INTEGER AS d_same_day_lq,
		'N' AS d_current_day, 'N' AS d_current_week, 'N' AS d_current_month, 'N' AS d_current_quarter, 'N' AS d_current_year
		FROM (SELECT i, (DATE '1900-01-02' + i::INTEGER) AS d FROM range(73049) t(i))`},
	{"time_dim", `SELECT i::INTEGER AS t_time_sk, sid(i) AS t_time_id, i::INTEGER AS t_time, (i // 3600)::INTEGER AS t_hour,
		((i // 60) % 60)::INTEGER AS t_minute, (i % 60)::INTEGER AS t_second, CASE WHEN i < 43200 THEN 'AM' ELSE 'PM' END AS t_am_pm,
		['third', 'first', 'second'][(i // 28800)::INTEGER + 1] AS t_shift, ['night', 'morning', 'afternoon', 'evening'][(i // 21600)::INTEGER + 1] AS t_sub_shift,
		CASE WHEN i // 3600 BETWEEN 6 AND 8 THEN 'breakfast' WHEN i // 3600 BETWEEN 11 AND 13 THEN 'lunch'
		     WHEN i // 3600 BETWEEN 17 AND 19 THEN 'dinner' END AS t_meal_time
		FROM range(86400) t(i)`},
	{"income_band", `SELECT (i + 1)::INTEGER AS ib_income_band_sk, (CASE WHEN i = 0 THEN 0 ELSE i * 10000 + 1 END)::INTEGER AS ib_lower_bound,
		((i + 1) * 10000)::INTEGER AS ib_upper_bound FROM range(20) t(i)`},
	{"household_demographics", `SELECT (i + 1)::INTEGER AS hd_demo_sk, (i % 20 + 1)::INTEGER AS hd_income_band_sk,
		{buy_potential}[((i // 20) % 6)::INTEGER + 1] AS hd_buy_potential, ((i // 120) % 10)::INTEGER AS hd_dep_count,
		((i // 1200) % 6 - 1)::INTEGER AS hd_vehicle_count FROM range(7200) t(i)`},
	{"customer_demographics", `SELECT (i + 1)::INTEGER AS cd_demo_sk, ['M', 'F'][(i % 2)::INTEGER + 1] AS cd_gender,
		['M', 'S', 'D', 'W', 'U'][((i // 2) % 5)::INTEGER + 1] AS cd_marital_status,
		['Primary', 'Secondary', 'College', '2 yr Degree', '4 yr Degree', 'Advanced Degree', 'Unknown'][((i // 10) % 7)::INTEGER + 1] AS cd_education_status,
		(((i // 70) % 20 + 1) * 500)::INTEGER AS cd_purchase_estimate,
		['Good', 'Low Risk', 'High Risk', 'Unknown'][((i // 1400) % 4)::INTEGER + 1] AS cd_credit_rating,
		((i // 5600) % 7)::INTEGER AS cd_dep_count, ((i // 39200) % 7)::INTEGER AS cd_dep_employed_count,
		((i // 274400) % 7)::INTEGER AS cd_dep_college_count
		FROM range({n:cdemo}) t(i)`},
	{"customer_address", `SELECT (i + 1)::INTEGER AS ca_address_sk, sid(i + 1) AS ca_address_id, (pk(i, 1, 999) + 1)::VARCHAR AS ca_street_number,
		pickl(i, 2, {streets}) || ' ' || pickl(i, 3, {streets}) AS ca_street_name, pickl(i, 4, {street_types}) AS ca_street_type,
		'Suite ' || pk(i, 5, 100) AS ca_suite_number, pickl(i, 6, {cities}) AS ca_city, pickl(i, 7, {counties}) AS ca_county,
		CASE WHEN pk(i, 8, 4) = 0 THEN pickl(i, 9, ['TN', 'GA', 'TX', 'KY', 'IN', 'IL', 'OH', 'VA', 'CA', 'NY']) ELSE pickl(i, 8, {states}) END AS ca_state,
		lpad((10000 + pk(i, 10, 300) * 283)::VARCHAR, 5, '0') AS ca_zip, 'United States' AS ca_country,
		(-5 - pk(i, 11, 4))::DECIMAL(5,2) AS ca_gmt_offset, pickl(i, 12, {location}) AS ca_location_type
		FROM range({n:address}) t(i)`},
	{"customer", `SELECT (i + 1)::INTEGER AS c_customer_sk, sid(i + 1) AS c_customer_id, fk(i, 1, {n:cdemo}) AS c_current_cdemo_sk,
		fk(i, 2, 7200) AS c_current_hdemo_sk, fk(i, 3, {n:address}) AS c_current_addr_sk,
		(2449028 + pk(i, 4, 3650))::INTEGER AS c_first_shipto_date_sk, (2449000 + pk(i, 5, 3650))::INTEGER AS c_first_sales_date_sk,
		pickl(i, 6, {salutations}) AS c_salutation, pickl(i, 7, {first_names}) AS c_first_name, pickl(i, 8, {last_names}) AS c_last_name,
		['Y', 'N'][pk(i, 9, 2) + 1] AS c_preferred_cust_flag, (pk(i, 10, 28) + 1)::INTEGER AS c_birth_day,
		(pk(i, 11, 12) + 1)::INTEGER AS c_birth_month, (1924 + pk(i, 12, 69))::INTEGER AS c_birth_year,
		pickl(i, 13, {countries}) AS c_birth_country, NULL::VARCHAR AS c_login,
		pickl(i, 7, {first_names}) || '.' || pickl(i, 8, {last_names}) || '@' || lower(pickl(i, 14, {cities})) || '.com' AS c_email_address,
		(2452000 + pk(i, 15, 640))::INTEGER AS c_last_review_date_sk
		FROM range({n:customer}) t(i)`},
	{"item", `SELECT (i + 1)::INTEGER AS i_item_sk, sid(i + 1) AS i_item_id, DATE '1997-10-27' AS i_rec_start_date, NULL::DATE AS i_rec_end_date,
		'item description ' || (i + 1) AS i_item_desc, money(i, 1, 1, 100) AS i_current_price,
		money(i, 2, 0, 60) AS i_wholesale_cost, (pk(i, 3, 1000000) + 1000000)::INTEGER AS i_brand_id,
		pickl(i, 4, {brand_words}) || ' #' || (pk(i, 5, 10) + 1) AS i_brand,
		(cls + 1)::INTEGER AS i_class_id, {classes}[cat + 1][cls + 1] AS i_class,
		(cat + 1)::INTEGER AS i_category_id, {categories}[cat + 1] AS i_category,
		(pk(i, 6, 1000) + 1)::INTEGER AS i_manufact_id, pickl(i, 7, {manufacts}) AS i_manufact,
		pickl(i, 8, {sizes}) AS i_size, 'formulation ' || pk(i, 9, 1000) AS i_formulation,
		pickl(i, 10, {colors}) AS i_color, pickl(i, 11, {units}) AS i_units, 'Unknown' AS i_container,
		(pk(i, 12, 100) + 1)::INTEGER AS i_manager_id, pickl(i, 13, {manufacts}) || pickl(i, 14, {manufacts}) AS i_product_name
		FROM (SELECT i, pk(i, 20, 10) AS cat, pk(i, 21, 8) AS c8, FROM range({n:item}) t(i))
		CROSS JOIN LATERAL (SELECT c8 % len({classes}[cat + 1]) AS cls)`},
	{"store", `SELECT (i + 1)::INTEGER AS s_store_sk, sid(i // 2 + 1) AS s_store_id, DATE '1997-03-13' AS s_rec_start_date, NULL::DATE AS s_rec_end_date,
		NULL::INTEGER AS s_closed_date_sk, {store_names}[(i % 10)::INTEGER + 1] AS s_store_name, (200 + pk(i, 1, 100))::INTEGER AS s_number_employees,
		(5000000 + pk(i, 2, 5000000))::INTEGER AS s_floor_space, '8AM-4PM' AS s_hours, pickl(i, 3, {first_names}) || ' ' || pickl(i, 4, {last_names}) AS s_manager,
		(pk(i, 5, 10) + 1)::INTEGER AS s_market_id, 'Unknown' AS s_geography_class, 'market description' AS s_market_desc,
		pickl(i, 6, {first_names}) || ' ' || pickl(i, 7, {last_names}) AS s_market_manager, 1::INTEGER AS s_division_id, 'Unknown' AS s_division_name,
		1::INTEGER AS s_company_id, 'Unknown' AS s_company_name, (pk(i, 8, 999) + 1)::VARCHAR AS s_street_number,
		pickl(i, 9, {streets}) AS s_street_name, pickl(i, 10, {street_types}) AS s_street_type, 'Suite ' || pk(i, 11, 100) AS s_suite_number,
		['Midway', 'Fairview', 'Oak Grove', 'Five Points'][(i % 4)::INTEGER + 1] AS s_city,
		['Williamson County', 'Ziebach County', 'Walker County', 'Richland County'][(i % 4)::INTEGER + 1] AS s_county,
		['TN', 'TN', 'GA', 'TX', 'KY', 'IN'][(i % 6)::INTEGER + 1] AS s_state, lpad((10000 + pk(i, 12, 300) * 283)::VARCHAR, 5, '0') AS s_zip,
		'United States' AS s_country, (-5 - i % 2)::DECIMAL(5,2) AS s_gmt_offset, (pk(i, 13, 12) / 100.0)::DECIMAL(5,2) AS s_tax_precentage
		FROM range(12) t(i)`},
	{"warehouse", `SELECT (i + 1)::INTEGER AS w_warehouse_sk, sid(i + 1) AS w_warehouse_id,
		['Conventional childr', 'Important issues liv', 'Doors canno', 'Bad cards must make.', 'Operations wit'][(i + 1)::INTEGER] AS w_warehouse_name,
		(50000 + pk(i, 1, 900000))::INTEGER AS w_warehouse_sq_ft, (pk(i, 2, 999) + 1)::VARCHAR AS w_street_number, pickl(i, 3, {streets}) AS w_street_name,
		pickl(i, 4, {street_types}) AS w_street_type, 'Suite ' || pk(i, 5, 100) AS w_suite_number, pickl(i, 6, {cities}) AS w_city,
		pickl(i, 7, {counties}) AS w_county, ['TN', 'GA', 'TX', 'CA', 'NY'][(i + 1)::INTEGER] AS w_state, lpad((10000 + pk(i, 8, 300) * 283)::VARCHAR, 5, '0') AS w_zip,
		'United States' AS w_country, (-5 - i % 3)::DECIMAL(5,2) AS w_gmt_offset
		FROM range(5) t(i)`},
	{"ship_mode", `SELECT (i + 1)::INTEGER AS sm_ship_mode_sk, sid(i + 1) AS sm_ship_mode_id, {ship_types}[(i % 6)::INTEGER + 1] AS sm_type,
		{ship_codes}[(i % 5)::INTEGER + 1] AS sm_code, {carriers}[(i + 1)::INTEGER] AS sm_carrier, 'contract' || i AS sm_contract
		FROM range(20) t(i)`},
	{"reason", `SELECT (i + 1)::INTEGER AS r_reason_sk, sid(i + 1) AS r_reason_id, {reasons}[(i + 1)::INTEGER] AS r_reason_desc FROM range(35) t(i)`},
	{"call_center", `SELECT (i + 1)::INTEGER AS cc_call_center_sk, sid(i // 2 + 1) AS cc_call_center_id, DATE '1998-01-01' AS cc_rec_start_date,
		NULL::DATE AS cc_rec_end_date, NULL::INTEGER AS cc_closed_date_sk, 2450952::INTEGER AS cc_open_date_sk, {cc_names}[(i + 1)::INTEGER] AS cc_name,
		['small', 'medium', 'large'][(i % 3)::INTEGER + 1] AS cc_class, (pk(i, 1, 60000) + 1)::INTEGER AS cc_employees,
		(pk(i, 2, 1000000) + 1)::INTEGER AS cc_sq_ft, '8AM-8PM' AS cc_hours, pickl(i, 3, {first_names}) || ' ' || pickl(i, 4, {last_names}) AS cc_manager,
		(pk(i, 5, 6) + 1)::INTEGER AS cc_mkt_id, 'market class' AS cc_mkt_class, 'market description' AS cc_mkt_desc,
		pickl(i, 6, {first_names}) || ' ' || pickl(i, 7, {last_names}) AS cc_market_manager, (pk(i, 8, 6) + 1)::INTEGER AS cc_division,
		pickl(i, 9, {companies}) AS cc_division_name, (pk(i, 10, 6) + 1)::INTEGER AS cc_company, pickl(i, 11, {companies}) AS cc_company_name,
		(pk(i, 12, 999) + 1)::VARCHAR AS cc_street_number, pickl(i, 13, {streets}) AS cc_street_name, pickl(i, 14, {street_types}) AS cc_street_type,
		'Suite ' || pk(i, 15, 100) AS cc_suite_number, pickl(i, 16, {cities}) AS cc_city, ['Williamson County', 'Ziebach County', 'Walker County'][(i % 3)::INTEGER + 1] AS cc_county,
		['TN', 'GA', 'TX'][(i % 3)::INTEGER + 1] AS cc_state, lpad((10000 + pk(i, 17, 300) * 283)::VARCHAR, 5, '0') AS cc_zip, 'United States' AS cc_country,
		(-5 - i % 2)::DECIMAL(5,2) AS cc_gmt_offset, (pk(i, 18, 12) / 100.0)::DECIMAL(5,2) AS cc_tax_percentage
		FROM range(6) t(i)`},
	{"catalog_page", `SELECT (i + 1)::INTEGER AS cp_catalog_page_sk, sid(i + 1) AS cp_catalog_page_id, (2450815 + (i // 108) * 30)::INTEGER AS cp_start_date_sk,
		(2450815 + (i // 108) * 30 + 29)::INTEGER AS cp_end_date_sk, 'DEPARTMENT' AS cp_department, (i // 108 + 1)::INTEGER AS cp_catalog_number,
		(i % 108 + 1)::INTEGER AS cp_catalog_page_number, 'page description ' || i AS cp_description, pickl(i, 1, {page_types}) AS cp_type
		FROM range(11718) t(i)`},
	{"web_site", `SELECT (i + 1)::INTEGER AS web_site_sk, sid(i // 2 + 1) AS web_site_id, DATE '1997-08-16' AS web_rec_start_date, NULL::DATE AS web_rec_end_date,
		'site_' || (i // 6) AS web_name, 2450628::INTEGER AS web_open_date_sk, NULL::INTEGER AS web_close_date_sk, 'Unknown' AS web_class,
		pickl(i, 1, {first_names}) || ' ' || pickl(i, 2, {last_names}) AS web_manager, (pk(i, 3, 6) + 1)::INTEGER AS web_mkt_id,
		'market class' AS web_mkt_class, 'market description' AS web_mkt_desc, pickl(i, 4, {first_names}) || ' ' || pickl(i, 5, {last_names}) AS web_market_manager,
		(pk(i, 6, 6) + 1)::INTEGER AS web_company_id, {companies}[(i % 6)::INTEGER + 1] AS web_company_name,
		(pk(i, 7, 999) + 1)::VARCHAR AS web_street_number, pickl(i, 8, {streets}) AS web_street_name, pickl(i, 9, {street_types}) AS web_street_type,
		'Suite ' || pk(i, 10, 100) AS web_suite_number, pickl(i, 11, {cities}) AS web_city, pickl(i, 12, {counties}) AS web_county,
		pickl(i, 13, ['TN', 'GA', 'TX', 'CA']) AS web_state, lpad((10000 + pk(i, 14, 300) * 283)::VARCHAR, 5, '0') AS web_zip,
		'United States' AS web_country, (-5 - i % 3)::DECIMAL(5,2) AS web_gmt_offset, (pk(i, 15, 12) / 100.0)::DECIMAL(5,2) AS web_tax_percentage
		FROM range(30) t(i)`},
	{"web_page", `SELECT (i + 1)::INTEGER AS wp_web_page_sk, sid(i + 1) AS wp_web_page_id, DATE '1997-09-03' AS wp_rec_start_date, NULL::DATE AS wp_rec_end_date,
		(2450600 + pk(i, 1, 800))::INTEGER AS wp_creation_date_sk, (2452500 + pk(i, 2, 140))::INTEGER AS wp_access_date_sk,
		['Y', 'N'][pk(i, 3, 2) + 1] AS wp_autogen_flag, fk(i, 4, {n:customer}) AS wp_customer_sk, 'http://www.foo.com' AS wp_url,
		pickl(i, 5, {web_pages}) AS wp_type, (pk(i, 6, 7000) + 1000)::INTEGER AS wp_char_count, (pk(i, 7, 24) + 2)::INTEGER AS wp_link_count,
		(pk(i, 8, 7) + 1)::INTEGER AS wp_image_count, pk(i, 9, 5)::INTEGER AS wp_max_ad_count
		FROM range(60) t(i)`},
	{"promotion", `SELECT (i + 1)::INTEGER AS p_promo_sk, sid(i + 1) AS p_promo_id, (2450100 + pk(i, 1, 2000))::INTEGER AS p_start_date_sk,
		(2450100 + pk(i, 1, 2000) + 30 + pk(i, 2, 60))::INTEGER AS p_end_date_sk, fk(i, 3, {n:item}) AS p_item_sk,
		1000::DECIMAL(15,2) AS p_cost, 1::INTEGER AS p_response_target, {store_names}[(i % 10)::INTEGER + 1] AS p_promo_name,
		['Y', 'N'][pk(i, 4, 2) + 1] AS p_channel_dmail, ['Y', 'N'][pk(i, 5, 2) + 1] AS p_channel_email, ['Y', 'N'][pk(i, 6, 2) + 1] AS p_channel_catalog,
		['Y', 'N'][pk(i, 7, 2) + 1] AS p_channel_tv, ['Y', 'N'][pk(i, 8, 2) + 1] AS p_channel_radio, ['Y', 'N'][pk(i, 9, 2) + 1] AS p_channel_press,
		['Y', 'N'][pk(i, 10, 2) + 1] AS p_channel_event, ['Y', 'N'][pk(i, 11, 2) + 1] AS p_channel_demo, 'details' AS p_channel_details,
		'Unknown' AS p_purpose, ['Y', 'N'][pk(i, 12, 2) + 1] AS p_discount_active
		FROM range(300) t(i)`},
	// A store ticket is eight lines sold together: one date, time, customer and store,
	// eight different items. Each customer buys from a pool of about 32 items in every
	// channel, so that the queries joining one customer's purchases across channels
	// find some.
	{"store_sales", `SELECT *, (ss_net_paid + ss_ext_tax)::DECIMAL(7,2) AS ss_net_paid_inc_tax,
		(ss_net_paid - ss_ext_wholesale_cost)::DECIMAL(7,2) AS ss_net_profit
		FROM (SELECT *, (ss_ext_sales_price - ss_coupon_amt)::DECIMAL(7,2) AS ss_net_paid
		FROM (SELECT fk(t, 1, 1825) + 2450815 AS ss_sold_date_sk, fk(t, 2, 86400) - 1 AS ss_sold_time_sk,
		(((pk(pk(t, 4, {n:customer}), 40, {n:item}) + (pk(t, 3, 4) * 8 + i % 8) * 997) % {n:item}) + 1)::INTEGER AS ss_item_sk, fk(t, 4, {n:customer}) AS ss_customer_sk,
		fk(t, 5, {n:cdemo}) AS ss_cdemo_sk, fk(t, 6, 7200) AS ss_hdemo_sk, fk(t, 7, {n:address}) AS ss_addr_sk, fk(t, 8, 12) AS ss_store_sk,
		fk(i, 9, 300) AS ss_promo_sk, t::BIGINT AS ss_ticket_number, q::INTEGER AS ss_quantity, wc AS ss_wholesale_cost, lp AS ss_list_price,
		sp AS ss_sales_price, (q * (lp - sp))::DECIMAL(7,2) AS ss_ext_discount_amt, (q * sp)::DECIMAL(7,2) AS ss_ext_sales_price,
		(q * wc)::DECIMAL(7,2) AS ss_ext_wholesale_cost, (q * lp)::DECIMAL(7,2) AS ss_ext_list_price,
		(q * sp * pk(i, 10, 10) / 100)::DECIMAL(7,2) AS ss_ext_tax,
		(CASE WHEN pk(i, 11, 5) = 0 THEN q * sp * pk(i, 12, 50) / 100 ELSE 0 END)::DECIMAL(7,2) AS ss_coupon_amt
		FROM (SELECT i, i // 8 AS t, pk(i, 13, 100) + 1 AS q, money(i, 14, 1, 100) AS wc FROM range({n:store_sales}) r(i)) a,
		LATERAL (SELECT (wc * (1 + pk(i, 15, 200) / 100.0))::DECIMAL(7,2) AS lp) b,
		LATERAL (SELECT (lp * (1 - pk(i, 16, 100) / 100.0))::DECIMAL(7,2) AS sp) c
))`},
	{"store_returns", `SELECT *, (sr_return_amt + sr_return_tax)::DECIMAL(7,2) AS sr_return_amt_inc_tax,
		(sr_return_amt * 0.4)::DECIMAL(7,2) AS sr_refunded_cash, (sr_return_amt * 0.3)::DECIMAL(7,2) AS sr_reversed_charge,
		(sr_return_amt * 0.3)::DECIMAL(7,2) AS sr_store_credit, (sr_return_amt * 0.5 + sr_fee)::DECIMAL(7,2) AS sr_net_loss
		FROM (SELECT ss_sold_date_sk + pk(ss_ticket_number, 1, 90) + 1 AS sr_returned_date_sk, pk(ss_ticket_number, 2, 86400) AS sr_return_time_sk,
		ss_item_sk AS sr_item_sk, ss_customer_sk AS sr_customer_sk, ss_cdemo_sk AS sr_cdemo_sk, ss_hdemo_sk AS sr_hdemo_sk,
		ss_addr_sk AS sr_addr_sk, ss_store_sk AS sr_store_sk, fk(ss_ticket_number, 3, 35) AS sr_reason_sk, ss_ticket_number AS sr_ticket_number,
		rq::INTEGER AS sr_return_quantity, (rq * ss_sales_price)::DECIMAL(7,2) AS sr_return_amt,
		(rq * ss_sales_price * pk(ss_ticket_number, 4, 10) / 100)::DECIMAL(7,2) AS sr_return_tax,
		(pk(ss_ticket_number, 5, 10000) / 100.0)::DECIMAL(7,2) AS sr_fee, (rq * ss_wholesale_cost / 10)::DECIMAL(7,2) AS sr_return_ship_cost
		FROM (SELECT *, pk(ss_ticket_number * 8 + ss_item_sk, 6, ss_quantity) + 1 AS rq FROM read_parquet({file:store_sales})
		      WHERE hash(ss_ticket_number * 31 + ss_item_sk) % 10 = 0))`},
	// A catalog or web order is six lines: one date, buyer, shipping address and
	// call centre or site. The channels hash different row numbers (the catalog's
	// from 1e9, the web's from 2e9), so that their orders differ.
	{"catalog_sales", `SELECT *, (cs_ext_sales_price - cs_coupon_amt)::DECIMAL(7,2) AS cs_net_paid,
		(cs_ext_sales_price - cs_coupon_amt + cs_ext_tax)::DECIMAL(7,2) AS cs_net_paid_inc_tax,
		(cs_ext_sales_price - cs_coupon_amt + cs_ext_ship_cost)::DECIMAL(7,2) AS cs_net_paid_inc_ship,
		(cs_ext_sales_price - cs_coupon_amt + cs_ext_ship_cost + cs_ext_tax)::DECIMAL(7,2) AS cs_net_paid_inc_ship_tax,
		(cs_ext_sales_price - cs_coupon_amt - cs_ext_wholesale_cost)::DECIMAL(7,2) AS cs_net_profit
		FROM (SELECT fk(t, 1, 1825) + 2450815 AS cs_sold_date_sk, fk(t, 2, 86400) - 1 AS cs_sold_time_sk,
		fk(t, 1, 1825) + 2450815 + pk(t, 3, 120) + 2 AS cs_ship_date_sk, fk(t, 4, {n:customer}) AS cs_bill_customer_sk,
		fk(t, 5, {n:cdemo}) AS cs_bill_cdemo_sk, fk(t, 6, 7200) AS cs_bill_hdemo_sk, fk(t, 7, {n:address}) AS cs_bill_addr_sk,
		CASE WHEN pk(t, 8, 2) = 0 THEN fk(t, 4, {n:customer}) ELSE fk(t, 9, {n:customer}) END AS cs_ship_customer_sk,
		fk(t, 10, {n:cdemo}) AS cs_ship_cdemo_sk, fk(t, 11, 7200) AS cs_ship_hdemo_sk, fk(t, 12, {n:address}) AS cs_ship_addr_sk,
		fk(t, 13, 6) AS cs_call_center_sk, fk(i, 14, 11718) AS cs_catalog_page_sk, fk(i, 15, 20) AS cs_ship_mode_sk,
		fk(i, 16, 5) AS cs_warehouse_sk, (((pk(pk(t, 4, {n:customer}), 40, {n:item}) + (pk(t, 17, 5) * 6 + i % 6) * 997) % {n:item}) + 1)::INTEGER AS cs_item_sk,
		fk(i, 18, 300) AS cs_promo_sk, t::BIGINT AS cs_order_number, q::INTEGER AS cs_quantity, wc AS cs_wholesale_cost,
		lp AS cs_list_price, sp AS cs_sales_price, (q * (lp - sp))::DECIMAL(7,2) AS cs_ext_discount_amt,
		(q * sp)::DECIMAL(7,2) AS cs_ext_sales_price, (q * wc)::DECIMAL(7,2) AS cs_ext_wholesale_cost,
		(q * lp)::DECIMAL(7,2) AS cs_ext_list_price, (q * sp * pk(i, 19, 10) / 100)::DECIMAL(7,2) AS cs_ext_tax,
		(CASE WHEN pk(i, 20, 5) = 0 THEN q * sp * pk(i, 21, 50) / 100 ELSE 0 END)::DECIMAL(7,2) AS cs_coupon_amt,
		(q * lp * pk(i, 22, 50) / 100)::DECIMAL(7,2) AS cs_ext_ship_cost
		FROM (SELECT i, i // 6 AS t, pk(i, 23, 100) + 1 AS q, money(i, 24, 1, 100) AS wc FROM (SELECT i + 1000000000 AS i FROM range({n:catalog_sales}) r0(i)) r(i)) a,
		LATERAL (SELECT (wc * (1 + pk(i, 25, 200) / 100.0))::DECIMAL(7,2) AS lp) b,
		LATERAL (SELECT (lp * (1 - pk(i, 26, 100) / 100.0))::DECIMAL(7,2) AS sp) c
)`},
	{"catalog_returns", `SELECT *, (cr_return_amount + cr_return_tax)::DECIMAL(7,2) AS cr_return_amt_inc_tax,
		(cr_return_amount * 0.4)::DECIMAL(7,2) AS cr_refunded_cash, (cr_return_amount * 0.3)::DECIMAL(7,2) AS cr_reversed_charge,
		(cr_return_amount * 0.3)::DECIMAL(7,2) AS cr_store_credit, (cr_return_amount * 0.5 + cr_fee)::DECIMAL(7,2) AS cr_net_loss
		FROM (SELECT cs_sold_date_sk + pk(cs_order_number, 1, 90) + 5 AS cr_returned_date_sk, pk(cs_order_number, 2, 86400) AS cr_returned_time_sk,
		cs_item_sk AS cr_item_sk, cs_bill_customer_sk AS cr_refunded_customer_sk, cs_bill_cdemo_sk AS cr_refunded_cdemo_sk,
		cs_bill_hdemo_sk AS cr_refunded_hdemo_sk, cs_bill_addr_sk AS cr_refunded_addr_sk, cs_ship_customer_sk AS cr_returning_customer_sk,
		cs_ship_cdemo_sk AS cr_returning_cdemo_sk, cs_ship_hdemo_sk AS cr_returning_hdemo_sk, cs_ship_addr_sk AS cr_returning_addr_sk,
		cs_call_center_sk AS cr_call_center_sk, cs_catalog_page_sk AS cr_catalog_page_sk, cs_ship_mode_sk AS cr_ship_mode_sk,
		cs_warehouse_sk AS cr_warehouse_sk, fk(cs_order_number, 3, 35) AS cr_reason_sk, cs_order_number AS cr_order_number,
		rq::INTEGER AS cr_return_quantity, (rq * cs_sales_price)::DECIMAL(7,2) AS cr_return_amount,
		(rq * cs_sales_price * pk(cs_order_number, 4, 10) / 100)::DECIMAL(7,2) AS cr_return_tax,
		(pk(cs_order_number, 5, 10000) / 100.0)::DECIMAL(7,2) AS cr_fee, (rq * cs_wholesale_cost / 10)::DECIMAL(7,2) AS cr_return_ship_cost
		FROM (SELECT *, pk(cs_order_number * 8 + cs_item_sk, 6, cs_quantity) + 1 AS rq FROM read_parquet({file:catalog_sales})
		      WHERE hash(cs_order_number * 37 + cs_item_sk) % 10 = 0))`},
	{"web_sales", `SELECT *, (ws_ext_sales_price - ws_coupon_amt)::DECIMAL(7,2) AS ws_net_paid,
		(ws_ext_sales_price - ws_coupon_amt + ws_ext_tax)::DECIMAL(7,2) AS ws_net_paid_inc_tax,
		(ws_ext_sales_price - ws_coupon_amt + ws_ext_ship_cost)::DECIMAL(7,2) AS ws_net_paid_inc_ship,
		(ws_ext_sales_price - ws_coupon_amt + ws_ext_ship_cost + ws_ext_tax)::DECIMAL(7,2) AS ws_net_paid_inc_ship_tax,
		(ws_ext_sales_price - ws_coupon_amt - ws_ext_wholesale_cost)::DECIMAL(7,2) AS ws_net_profit
		FROM (SELECT fk(t, 1, 1825) + 2450815 AS ws_sold_date_sk, fk(t, 2, 86400) - 1 AS ws_sold_time_sk,
		fk(t, 1, 1825) + 2450815 + pk(t, 3, 120) + 1 AS ws_ship_date_sk,
		(((pk(pk(t, 4, {n:customer}), 40, {n:item}) + (pk(t, 17, 5) * 6 + i % 6) * 997) % {n:item}) + 1)::INTEGER AS ws_item_sk, fk(t, 4, {n:customer}) AS ws_bill_customer_sk,
		fk(t, 5, {n:cdemo}) AS ws_bill_cdemo_sk, fk(t, 6, 7200) AS ws_bill_hdemo_sk, fk(t, 7, {n:address}) AS ws_bill_addr_sk,
		CASE WHEN pk(t, 8, 2) = 0 THEN fk(t, 4, {n:customer}) ELSE fk(t, 9, {n:customer}) END AS ws_ship_customer_sk,
		fk(t, 10, {n:cdemo}) AS ws_ship_cdemo_sk, fk(t, 11, 7200) AS ws_ship_hdemo_sk, fk(t, 12, {n:address}) AS ws_ship_addr_sk,
		fk(i, 13, 60) AS ws_web_page_sk, fk(t, 14, 30) AS ws_web_site_sk, fk(i, 15, 20) AS ws_ship_mode_sk, fk(i, 16, 5) AS ws_warehouse_sk,
		fk(i, 18, 300) AS ws_promo_sk, t::BIGINT AS ws_order_number, q::INTEGER AS ws_quantity, wc AS ws_wholesale_cost,
		lp AS ws_list_price, sp AS ws_sales_price, (q * (lp - sp))::DECIMAL(7,2) AS ws_ext_discount_amt,
		(q * sp)::DECIMAL(7,2) AS ws_ext_sales_price, (q * wc)::DECIMAL(7,2) AS ws_ext_wholesale_cost,
		(q * lp)::DECIMAL(7,2) AS ws_ext_list_price, (q * sp * pk(i, 19, 10) / 100)::DECIMAL(7,2) AS ws_ext_tax,
		(CASE WHEN pk(i, 20, 5) = 0 THEN q * sp * pk(i, 21, 50) / 100 ELSE 0 END)::DECIMAL(7,2) AS ws_coupon_amt,
		(q * lp * pk(i, 22, 50) / 100)::DECIMAL(7,2) AS ws_ext_ship_cost
		FROM (SELECT i, i // 6 AS t, pk(i, 23, 100) + 1 AS q, money(i, 24, 1, 100) AS wc FROM (SELECT i + 2000000000 AS i FROM range({n:web_sales}) r0(i)) r(i)) a,
		LATERAL (SELECT (wc * (1 + pk(i, 25, 200) / 100.0))::DECIMAL(7,2) AS lp) b,
		LATERAL (SELECT (lp * (1 - pk(i, 26, 100) / 100.0))::DECIMAL(7,2) AS sp) c
)`},
	{"web_returns", `SELECT *, (wr_return_amt + wr_return_tax)::DECIMAL(7,2) AS wr_return_amt_inc_tax,
		(wr_return_amt * 0.4)::DECIMAL(7,2) AS wr_refunded_cash, (wr_return_amt * 0.3)::DECIMAL(7,2) AS wr_reversed_charge,
		(wr_return_amt * 0.3)::DECIMAL(7,2) AS wr_account_credit, (wr_return_amt * 0.5 + wr_fee)::DECIMAL(7,2) AS wr_net_loss
		FROM (SELECT ws_sold_date_sk + pk(ws_order_number, 1, 90) + 5 AS wr_returned_date_sk, pk(ws_order_number, 2, 86400) AS wr_returned_time_sk,
		ws_item_sk AS wr_item_sk, ws_bill_customer_sk AS wr_refunded_customer_sk, ws_bill_cdemo_sk AS wr_refunded_cdemo_sk,
		ws_bill_hdemo_sk AS wr_refunded_hdemo_sk, ws_bill_addr_sk AS wr_refunded_addr_sk, ws_ship_customer_sk AS wr_returning_customer_sk,
		ws_ship_cdemo_sk AS wr_returning_cdemo_sk, ws_ship_hdemo_sk AS wr_returning_hdemo_sk, ws_ship_addr_sk AS wr_returning_addr_sk,
		ws_web_page_sk AS wr_web_page_sk, fk(ws_order_number, 3, 35) AS wr_reason_sk, ws_order_number AS wr_order_number,
		rq::INTEGER AS wr_return_quantity, (rq * ws_sales_price)::DECIMAL(7,2) AS wr_return_amt,
		(rq * ws_sales_price * pk(ws_order_number, 4, 10) / 100)::DECIMAL(7,2) AS wr_return_tax,
		(pk(ws_order_number, 5, 10000) / 100.0)::DECIMAL(7,2) AS wr_fee, (rq * ws_wholesale_cost / 10)::DECIMAL(7,2) AS wr_return_ship_cost
		FROM (SELECT *, pk(ws_order_number * 8 + ws_item_sk, 6, ws_quantity) + 1 AS rq FROM read_parquet({file:web_sales})
		      WHERE hash(ws_order_number * 41 + ws_item_sk) % 10 = 0))`},
	// The stock of a subset of the items in each warehouse, counted every Thursday
	// of the five years the sales cover.
	{"inventory", `SELECT (2450815 + w * 7)::INTEGER AS inv_date_sk, (((it * 7) % {n:item}) + 1)::INTEGER AS inv_item_sk,
		(wh + 1)::INTEGER AS inv_warehouse_sk,
		CASE WHEN hash(w * 1000003 + it * 7 + wh) % 40 = 0 THEN NULL ELSE pk(w * 1000003 + it * 7 + wh, 1, 1000)::INTEGER END AS inv_quantity_on_hand
		FROM range(261) a(w), range({n:inv_items}) b(it), range(5) c(wh)`},
}

// dsExpand fills a table's SQL template.
func dsExpand(q string, sizes map[string]int64, out string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(q, '{')
		if i < 0 {
			b.WriteString(q)
			break
		}
		j := strings.IndexByte(q[i:], '}')
		b.WriteString(q[:i])
		key := q[i+1 : i+j]
		q = q[i+j+1:]
		switch {
		case strings.HasPrefix(key, "n:"):
			b.WriteString(strconv.FormatInt(sizes[key[2:]], 10))
		case strings.HasPrefix(key, "file:"):
			b.WriteString(sqlString(filepath.Join(out, key[5:], "part-0.parquet")))
		case key == "categories":
			var names []string
			for _, c := range dsCategories {
				names = append(names, c.name)
			}
			b.WriteString(sqlList(names))
		case key == "classes":
			var ls []string
			for _, c := range dsCategories {
				ls = append(ls, sqlList(c.classes))
			}
			b.WriteString("[" + strings.Join(ls, ", ") + "]")
		case key == ":x":
			// A format specifier, not a placeholder.
			b.WriteString("{:x}")
		default:
			l, ok := dsLists[key]
			if !ok {
				panic("ds: no value list " + key)
			}
			b.WriteString(sqlList(l))
		}
	}
	return b.String()
}

// sqlList is a DuckDB list literal of strings.
func sqlList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = sqlString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// DSQueries reads the queries from queries/ds/qNN.sql.
func DSQueries() ([]Query, error) {
	names, err := dsFS.ReadDir("queries/ds")
	if err != nil {
		return nil, err
	}
	var qs []Query
	for _, e := range names {
		if !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		b, err := dsFS.ReadFile(path.Join("queries/ds", e.Name()))
		if err != nil {
			return nil, err
		}
		q, err := parseQueryFile(strings.TrimSuffix(e.Name(), ".sql"), string(b))
		if err != nil {
			return nil, err
		}
		qs = append(qs, q)
	}
	slices.SortFunc(qs, func(a, b Query) int { return strings.Compare(a.Name, b.Name) })
	return qs, nil
}

// DSSuite returns the decision-support suite, generating its data with DuckDB
// first when the cache under cfg.DataDir does not hold it.
func DSSuite(ctx context.Context, cfg DSConfig, progress io.Writer) (*Suite, error) {
	qs, err := DSQueries()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(cfg.DataDir, "ds-sf"+strconv.FormatFloat(cfg.SF, 'f', -1, 64))
	err = ensureData(dir, progress, func(out string, _ func(done, total int64)) error {
		return generateDS(ctx, cfg.SF, out, progress)
	})
	if err != nil {
		return nil, fmt.Errorf("cannot generate the decision-support data: %w", err)
	}
	info, err := dataInfo(dir)
	if err != nil {
		return nil, err
	}
	sz := dsSizes(cfg.SF)
	info.Description = fmt.Sprintf("TPC-DS-shaped SF %g: store_sales %d rows, catalog_sales %d, web_sales %d, customer %d, item %d",
		cfg.SF, sz["store_sales"], sz["catalog_sales"], sz["web_sales"], sz["customer"], sz["item"])
	s := &Suite{Name: "ds", Queries: qs, Data: info}
	for _, t := range dsTables {
		s.Tables = append(s.Tables, Table{Name: t.name, Dir: filepath.Join(dir, t.name)})
	}
	return s, nil
}

// generateDS writes each of the 24 tables as one Parquet file under out/<table>/.
func generateDS(ctx context.Context, sf float64, out string, progress io.Writer) error {
	c, err := duckdb.NewConnector("", nil)
	if err != nil {
		return fmt.Errorf("cannot open DuckDB: %w", err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, m := range dsMacros {
		if _, err := db.ExecContext(ctx, m); err != nil {
			return fmt.Errorf("%s: %w", m, err)
		}
	}
	sizes := dsSizes(sf)
	for _, t := range dsTables {
		tdir := filepath.Join(out, t.name)
		if err := os.MkdirAll(tdir, 0o755); err != nil {
			return err
		}
		if progress != nil {
			fmt.Fprintf(progress, "generating %s\n", t.name)
		}
		q := dsExpand(t.sql, sizes, out)
		copyTo := fmt.Sprintf("COPY (%s) TO %s (FORMAT parquet, ROW_GROUP_SIZE 122880)", q, sqlString(filepath.Join(tdir, "part-0.parquet")))
		if _, err := db.ExecContext(ctx, copyTo); err != nil {
			return fmt.Errorf("cannot write %s: %w", t.name, err)
		}
	}
	return nil
}
