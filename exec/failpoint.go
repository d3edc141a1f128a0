package exec

import "sync/atomic"

// failAt, when set, is called at the failure points below with the point's name;
// tests set it (SetFailAt) to make a statement panic or stall there and check that
// it is contained. It is nil in production, where a point costs one atomic load.
var failAt atomic.Pointer[func(point string)]

// The failure points.
const (
	// PointScanWorker is in a scan's worker goroutine, before each batch it hands on.
	PointScanWorker = "scan-worker"
	// PointJoinBuild is in a hash join building its table, before the keys are inserted.
	PointJoinBuild = "join-build"
	// PointJoinProbe is in a hash join's probe, before each probe batch.
	PointJoinProbe = "join-probe"
	// PointAggregateUpdate is in a hash aggregate, before each batch is folded.
	PointAggregateUpdate = "aggregate-update"
	// PointSort is in a sort, before it orders the rows it holds.
	PointSort = "sort"
	// PointWindow is in a window operator, before it orders the rows for a function.
	PointWindow = "window"
	// PointRoot is in the statement's own goroutine, before each result batch is taken.
	PointRoot = "root"
)

// SetFailAt sets the function called at every failure point, for tests; nil
// removes it.
func SetFailAt(f func(point string)) {
	if f == nil {
		failAt.Store(nil)
		return
	}
	failAt.Store(&f)
}

// failPoint calls the function SetFailAt set, if any.
func failPoint(point string) {
	if f := failAt.Load(); f != nil {
		(*f)(point)
	}
}
