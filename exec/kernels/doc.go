// Package kernels holds Lore's scalar kernels and the rules that type them: the
// function registry the binder resolves every operator and function call through
// (Resolve), implicit coercions (CommonType), casts (Cast, ParseLiteral), and the
// typed loops that evaluate them over whole batches (Function.Eval, CompareConst,
// IfElse).
//
// Evaluation model. A kernel takes Arrow arrays of equal length n — a batch's
// physical rows; selection vectors are the caller's business — and returns a new
// array of n rows. Constants arrive as arrays built by ConstArray. NULL in gives
// NULL out unless a function says otherwise (IS NULL, IS DISTINCT FROM, AND/OR,
// COALESCE, concat, greatest/least).
//
// Invariants:
//   - Hot paths (comparisons, arithmetic on 64-bit integers and floats, AND/OR/NOT,
//     CompareConst) switch on the type once per call and loop over raw slices;
//     validity is combined with bitmap operations. No kernel boxes rows into
//     types.Value or `any` except for rare types (BLOB, TIME, nested) rendered as
//     text.
//   - Dictionary arrays stay dictionaries where that saves work: CompareConst and
//     strict functions whose other arguments are constant run once per dictionary
//     value; Cast converts the dictionary only. Other cases decode (Decode).
//   - Inputs are never modified. Results are new arrays (bit offset 0) or share
//     immutable buffers with inputs: a function may return an argument unchanged
//     (round of an integer, a cast to the same type) and a dictionary result
//     reuses the input's indices.
//   - Function.Eval keeps no state between calls, so one resolved Function serves
//     every worker of a statement; now() and current_date are fixed when resolved.
//   - Results follow DuckDB where the two engines could differ: `/` is float
//     division with IEEE results for division by zero (DuckDB 1.1+), `//` and `%`
//     by zero are NULL, NaN sorts above every number and equals itself, -0 = +0,
//     float → integer casts round half away from zero, substring takes negative
//     starts from the end. Integer arithmetic is done in BIGINT (DuckDB keeps the
//     narrower type; the values are the same) and overflow is an error.
//   - Errors carry codes from errs: a call that matches no function and a value
//     that cannot be converted or overflows are ANALYSIS_ERROR (DuckDB's Binder,
//     Conversion and Out of Range errors); a panic means a broken invariant (BUG:).
package kernels
