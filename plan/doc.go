// Package plan turns parsed SQL into a logical plan: the binder resolves names and
// types against the catalog (through the small Catalog interface it consumes),
// resolves every operator and function through the kernel registry (which decides
// coercions), and builds a tree of nodes whose columns are addressed by position.
//
// Invariants: every Expr is typed; a ColRef's Idx addresses the output columns of the
// node's input (for joins, the left columns followed by the right ones); operand types
// of every Call equal the resolved function's argument types (the binder inserts Casts).
// A ZoneSkip (on a Scan, or on a Stored result derived zone by zone) counts every zone
// of the record once, by the reason for what was done with it: its Reasons add up to
// Considered, and only the zones in None and Answered go unread.
//
// The binder reads pg_query's syntax tree and so needs cgo; its files build only with
// cgo. The nodes, expressions and their helpers do not, so a process that runs a plan
// it did not bind — a worker of a distributed run — links plan and exec without cgo
// (CI builds them so).
// Package plan/rules rewrites plans (pushdown, column pruning, join sides) without
// changing results.
package plan
