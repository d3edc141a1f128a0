// Package agg holds Lore's aggregate functions, each written once as a partial-state
// machine (DESIGN.md §3) and used alike by grouped and ungrouped aggregation, by the
// merge of parallel workers' partials, by windows, and later by answers built from
// stored zone partials.
//
// An aggregate is named by a Spec (function and argument type); ResultType types it
// and New makes its Accumulator, which holds the states of groups 0..n-1 in typed,
// columnar slices. The life of a state: Resize (init), Update with batches of rows
// mapped to groups, Merge with other accumulators of the same Spec through a group
// mapping, and Final, which reads results without consuming the state.
//
// An aggregate of several inputs (corr(y, x), arg_min(v, by), or any function with
// DISTINCT or ORDER BY inside the call, whose keys follow its arguments) is a
// MultiArg and is fed through UpdateArgs; Arity says how many columns it reads. The
// aggregates that need all of a group's values (list, string_agg, mode, the
// quantiles, and the DISTINCT and ORDER BY forms of every function) keep the rows
// they were given, copied out of their batches, and compute at Final; their merge
// appends the other partial's rows.
//
// Invariants:
//   - SQL semantics: NULL arguments are ignored by every function but count_star; a
//     group with no non-NULL rows gives 0 for the counts and NULL otherwise.
//   - Merge(Update(A), Update(B)) equals Update(A ∪ B): the partial states are exact.
//     Integer and decimal sums are accumulated in 128 bits, so only a final result that
//     does not fit its type is an error (ANALYSIS_ERROR "SUM overflowed …"); float
//     sums may differ in the last bits with the order of addition.
//   - Dictionary-encoded arguments are read through their dictionaries in place; an
//     ungrouped MIN or MAX visits each referenced dictionary entry once.
//   - Hot loops are typed per argument type; the type is switched on once per batch.
//   - Accumulators are not safe for concurrent use.
package agg
