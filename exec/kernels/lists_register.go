package kernels

// addListFunctions enters the list functions into the registry, under all of
// DuckDB's names; a name that also has a meaning for strings (len, length,
// contains, repeat, ||) keeps it for arguments that are not lists.
func addListFunctions() {
	add := func(b binder, names ...string) {
		for _, n := range names {
			registry[n] = b
		}
	}
	for _, n := range []string{"len", "length"} {
		registry[n] = orList(bindListLen, registry[n])
	}
	registry["array_length"] = bindArrayLength
	registry["contains"] = orList(bindListSearch(false), registry["contains"])
	registry["repeat"] = orList(bindListRepeat, registry["repeat"])
	registry["||"] = eitherList(bindListConcat, registry["||"])
	registry["array_to_string"] = bindListToString
	add(bindListSearch(false), "list_contains", "list_has", "array_contains", "array_has")
	add(bindListSearch(true), "list_position", "list_indexof", "array_position", "array_indexof")
	add(bindListConcat, "list_concat", "list_cat", "array_concat", "array_cat")
	add(bindListAdd(false, false), "list_append", "array_append", "array_push_back")
	add(bindListAdd(true, false), "list_prepend", "array_prepend")
	add(bindListAdd(true, true), "array_push_front")
	add(listMap(reverseElems), "list_reverse", "array_reverse")
	add(bindFlatten, "flatten")
	add(bindListResize, "list_resize", "array_resize")
	add(bindListSets("any"), "list_has_any", "array_has_any", "&&")
	add(bindListSets("all"), "list_has_all", "array_has_all", "@>")
	add(bindListSets("contained"), "<@")
	add(bindListSets("intersect"), "list_intersect", "array_intersect")
	add(bindListWhere, "list_where", "array_where")
	add(bindListSelect, "list_select", "array_select")
	add(bindRangeList(false), "range")
	add(bindRangeList(true), "generate_series")
	add(bindListVector("cosine"), "list_cosine_similarity", "array_cosine_similarity")
	add(bindListVector("distance"), "list_distance", "array_distance")
	add(bindListVector("inner"), "list_inner_product", "list_dot_product", "array_inner_product", "array_dot_product")
	add(bindListSort(false), "list_sort", "array_sort")
	add(bindListSort(true), "list_reverse_sort", "array_reverse_sort")
	add(bindListDistinct(false), "list_distinct", "array_distinct")
	add(bindListDistinct(true), "list_unique", "array_unique")
	addListAggregates()
	addMapFunctions()
}
