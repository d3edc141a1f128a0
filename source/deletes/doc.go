// Package deletes holds the deleted rows of lake data files: the 0-based positions of
// rows in one Parquet file that a Delta deletion vector or an Iceberg position delete or
// deletion vector marks as deleted, in one form the reader applies while scanning.
//
// Both formats store the positions as a 64-bit Roaring bitmap in the "portable"
// serialization; this package decodes it (DecodeRoaring64), the framing around it in a
// Delta deletion vector (DV.Read: inline Z85 text or a deletion_vector_<uuid>.bin file)
// and in an Iceberg deletion-vector-v1 Puffin blob (ReadPuffinDV).
//
// Invariants:
//   - Positions is immutable once built and safe for concurrent use; a nil *Positions
//     is the empty set.
//   - Positions keeps Roaring's own containers (sorted 16-bit arrays, 8 KiB bitmaps and
//     runs), so its memory is proportional to the bytes it was decoded from, never to
//     the number of positions a run or bitmap stands for.
//   - Decoders never trust a count before the bytes that back it are present: malformed,
//     truncated or hostile input is an errs.CorruptSource error, never a panic or an
//     allocation larger than the input.
//   - A deletion vector whose decoded cardinality differs from the cardinality its
//     descriptor (Delta) or manifest (Iceberg) states is corrupt.
package deletes
