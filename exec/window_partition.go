package exec

import (
	"cmp"
	stdslices "slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/exec/kernels"
)

// sortWindowRows sorts perm, the rows of a window's input, by the partition keys
// (parts, compared by cmps) and then by orderCmps, keeping rows that tie in their
// input order, as a stable sort does. It returns the rank of each row's partition
// (rows of one partition share it), or nil when the partitions were compared column
// by column.
//
// Comparing the partition columns row against row dominated windows over many rows
// partitioned by several strings (TPC-DS Q47's brand, store and company), so the
// partitions are first told apart by hashing their keys, the distinct keys are sorted
// once, and each row then compares one integer, its partition's rank, where it
// compared every partition column. Keys that cannot be hashed are compared as before.
func sortWindowRows(it *interrupt, perm []int32, parts []arrow.Array, cmps, orderCmps []func(i, j int) int) []int32 {
	ranks := partitionRanks(it, parts, cmps, len(perm))
	rowCmps := orderCmps
	if ranks == nil {
		rowCmps = append(append([]func(i, j int) int(nil), cmps...), orderCmps...)
	}
	stdslices.SortFunc(perm, func(a, b int32) int {
		it.tick()
		if ranks != nil {
			if r := cmp.Compare(ranks[a], ranks[b]); r != 0 {
				return r
			}
		}
		for _, c := range rowCmps {
			if r := c(int(a), int(b)); r != 0 {
				return r
			}
		}
		return cmp.Compare(a, b)
	})
	return ranks
}

// partitionRanks returns, for each of n rows, the rank of its partition key among
// the distinct keys in the order cmps gives them (equal keys share a rank), or nil
// when there are no partition keys or one cannot be hashed.
func partitionRanks(it *interrupt, parts []arrow.Array, cmps []func(i, j int) int, n int) []int32 {
	if len(parts) == 0 || n == 0 {
		return nil
	}
	keyTypes := make([]arrow.DataType, len(parts))
	for i, a := range parts {
		if !kernels.ValidKeyType(a.DataType()) {
			return nil
		}
		keyTypes[i] = a.DataType()
	}
	t := kernels.NewKeyTable(keyTypes)
	ids := make([]uint32, n)
	t.Insert(parts, nil, ids)
	// Ids are given in row order, so the first row of each key is found in one pass.
	first := make([]int32, 0, t.Len())
	for r, id := range ids {
		if int(id) == len(first) {
			first = append(first, int32(r))
		}
	}
	compare := func(a, b int32) int {
		for _, c := range cmps {
			if r := c(int(a), int(b)); r != 0 {
				return r
			}
		}
		return 0
	}
	keys := make([]int32, len(first))
	for k := range keys {
		keys[k] = int32(k)
	}
	stdslices.SortFunc(keys, func(a, b int32) int {
		it.tick()
		return compare(first[a], first[b])
	})
	rank := make([]int32, len(first))
	r := int32(0)
	for k, key := range keys {
		if k > 0 && compare(first[keys[k-1]], first[key]) != 0 {
			r++
		}
		rank[key] = r
	}
	out := make([]int32, n)
	for row, id := range ids {
		out[row] = rank[id]
	}
	return out
}
