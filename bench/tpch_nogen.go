//go:build !tpch

package main

import (
	"context"
	"errors"
)

// errNoTPCHGen is returned when TPC-H data is missing and this build has no
// generator; build with -tags tpch once package gen has TPCH.
var errNoTPCHGen = errors.New("TPC-H generator not available in this build (build with -tags tpch)")

func generateTPCH(ctx context.Context, sf float64, files int, out string, report func(done, total int64)) error {
	return errNoTPCHGen
}
