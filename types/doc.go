// Package types is Lore's type system. Lore's logical types are Arrow data types
// (so batches, results and Parquet conversions need no translation); this package
// names them the way SQL users read them (BIGINT, VARCHAR, TIMESTAMP WITH TIME ZONE),
// parses SQL type names for CAST, classifies types, and holds Value, the one boxed
// scalar used for literals, partition values and bounds — never per row in a hot loop.
package types
