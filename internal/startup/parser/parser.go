// Package parser readies the SQL parser for the lore command while the rest of the
// command's packages initialise.
//
// The parser's first use builds pg_query's protobuf types, about 2 ms of CPU: more
// than a whole answer from statistics. An engine readies it in the background when
// it opens (sql.Warm), but in a fresh process that overlaps only the catalog's
// opening, and the first statement waits for the rest. This package starts the
// same warm-up as soon as the parser's own packages are initialised: Go initialises
// a package once its dependencies are, so this init runs early, and the warm-up
// goes on, on the other core, while the remaining packages (the Iceberg, AWS,
// Prometheus and gRPC clients among them, several milliseconds) initialise.
package parser

import "github.com/loredb/lore/sql"

func init() { go sql.Warm() }
