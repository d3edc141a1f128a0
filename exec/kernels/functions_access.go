package kernels

// Registers the element access functions of access.go. It runs after functions.go's
// init, which makes the registry (Go runs a package's files' inits in name order).

func init() {
	for name, b := range map[string]binder{
		"list_extract":   bindListExtract(false),
		"list_element":   bindListExtract(false),
		"array_extract":  bindListExtract(true),
		"array_slice":    bindListSlice,
		"list_slice":     bindListSlice,
		"struct_extract": bindStructExtract,
	} {
		registry[name] = b
	}
}
