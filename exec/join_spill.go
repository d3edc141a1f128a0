package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/vector"
)

// Grace hash join. A join whose build side outgrows its share of the statement's
// budget writes the build rows, those held and those still to come, to spillFanOut
// spill files by the hash of their join key, then the probe rows to as many files
// by the hash of theirs. Rows that can match have equal keys, so they are in files
// of the same number: each pair of files is then joined alone, by a join like this
// one over the two files, which spills again (by further bits of the hash) when
// its build file is still too large, down to maxSpillDepth levels. Every build
// row and every probe row is in exactly one pair, so outer, semi and anti joins
// emit their unmatched rows once. NOT IN (null-aware anti join) depends on the
// whole build side and does not spill; neither does a join without keys.

const (
	// joinBuildShare is the part of the free budget a build side may hold before
	// it spills: the table and the concatenated rows come on top of the batches.
	joinBuildShare = 3
)

// graceJoin is a spilling join's partition files and where it is in them.
type graceJoin struct {
	j      *hashJoin
	build  partitionFiles
	probe  partitionFiles
	next   int       // the next pair of files to join
	sub    *hashJoin // the join of the current pair
	probed bool      // the probe side is partitioned
}

// canSpill reports whether the join may partition its sides to disk.
func (j *hashJoin) canSpill() bool {
	return j.bd.env.Spill != nil && j.res.budget != nil && len(j.buildKeys) > 0 && !j.node.NullAwareAnti &&
		j.depth < maxSpillDepth
}

// drainBuild reads the build side whole, as drainEach does (each, when not nil,
// indexes every batch as it comes), unless it outgrows the build share: then it is
// written to partition files (j.grace), what each was given is to be dropped, and
// nil returned.
func (j *hashJoin) drainBuild(ctx context.Context, op Operator, each func(*vector.Batch) error) (*vector.Batch, error) {
	if !j.canSpill() {
		return drainEach(ctx, op, j.buildWidth, &j.res, each)
	}
	// A share of what the statement's other operators leave.
	share := (j.res.budget.Free() + j.res.held) / joinBuildShare
	var buf []*vector.Batch
	var held int64
	take := func(b *vector.Batch) error {
		if j.grace != nil {
			return j.grace.add(ctx, b, true)
		}
		n := batchSize(b)
		var err error
		if held+n <= share {
			err = j.res.grow(n)
		}
		if held+n > share || errs.CodeOf(err) == errs.ResourceExhausted {
			j.grace = &graceJoin{j: j}
			for _, h := range append(buf, b) {
				if err := j.grace.add(ctx, h, true); err != nil {
					return err
				}
			}
			buf = nil
			j.res.release()
			return nil
		}
		if err != nil {
			return err
		}
		buf = append(buf, b)
		held += n
		if each != nil {
			return each(b)
		}
		return nil
	}
	if err := eachKept(ctx, op, j.buildWidth, take); err != nil {
		return nil, err
	}
	if j.grace != nil {
		return nil, j.grace.finish(true)
	}
	if len(buf) < 2 {
		return concatBatches(ctx, buf, j.buildWidth)
	}
	if err := j.res.resize(2 * held); err != nil {
		return nil, err
	}
	out, err := concatBatches(ctx, buf, j.buildWidth)
	if err != nil {
		return nil, err
	}
	return out, j.res.resize(held)
}

// spillBuilt splits the build side already read, and its table dropped.
func (j *hashJoin) spillBuilt(ctx context.Context) error {
	b := j.build
	j.build, j.table, j.first, j.next, j.matched, j.buildKeyCols, j.buildValid = nil, nil, nil, nil, nil, nil, nil
	j.buildHasNullKey = false
	j.grace = &graceJoin{j: j}
	err := j.grace.add(ctx, b, true)
	j.res.release()
	if err != nil {
		return err
	}
	return j.grace.finish(true)
}

// add writes b's rows (a build batch, or a probe batch) to the files their keys
// hash to.
func (g *graceJoin) add(ctx context.Context, b *vector.Batch, build bool) error {
	j := g.j
	evals, width, files, what := j.probeKeys, j.probeWidth, &g.probe, "join-probe"
	if build {
		evals, width, files, what = j.buildKeys, j.buildWidth, &g.build, "join-build"
	}
	b = b.Compact()
	if b.Rows == 0 {
		return nil
	}
	keys := make([]arrow.Array, len(evals))
	for i, k := range evals {
		a, err := k(ctx, b)
		if err != nil {
			return err
		}
		keys[i] = a
	}
	return files.add(j.bd.env.Spill, what, width, j.depth, b, keys)
}

// finish ends the build (or probe) files.
func (g *graceJoin) finish(build bool) error {
	if build {
		return g.build.finish()
	}
	g.probed = true
	return g.probe.finish()
}

// partitionProbe writes the whole probe side to the probe files.
func (g *graceJoin) partitionProbe(ctx context.Context, probe Operator) error {
	for {
		b, err := probe.Next(ctx)
		if err != nil {
			return err
		}
		if b == nil {
			return g.finish(false)
		}
		if b.Len() == 0 {
			continue
		}
		if err := g.add(ctx, g.j.compactProbe(b), false); err != nil {
			return err
		}
	}
}

// nextBatch returns the next output batch, joining pair after pair of files.
func (g *graceJoin) nextBatch(ctx context.Context) (*vector.Batch, error) {
	for {
		if g.sub != nil {
			b, err := g.sub.Next(ctx)
			if err != nil || b != nil {
				return b, err
			}
			g.sub.Close()
			g.sub = nil
		}
		if g.next == spillFanOut {
			return nil, nil
		}
		p := g.next
		g.next++
		build, probe := g.build.files[p], g.probe.files[p]
		g.build.files[p], g.probe.files[p] = nil, nil
		if build == nil && probe == nil {
			continue
		}
		g.sub = g.j.pairJoin(&spillOp{f: probe}, &spillOp{f: build})
	}
}

// close removes the files not yet joined.
func (g *graceJoin) close() {
	if g.sub != nil {
		g.sub.Close()
		g.sub = nil
	}
	g.build.remove()
	g.probe.remove()
}

// pairJoin is a join like j over one pair of partition files, one level deeper.
func (j *hashJoin) pairJoin(probe, build Operator) *hashJoin {
	return &hashJoin{
		bd: j.bd, node: j.node, swapped: j.swapped, tracks: j.tracks,
		probeKeys: j.probeKeys, buildKeys: j.buildKeys, residual: j.residual, residualCols: j.residualCols,
		outputCols: j.outputCols, probeWidth: j.probeWidth, buildWidth: j.buildWidth, buildTypes: j.buildTypes,
		probe: probe, pendingBuild: build, res: reservation{budget: j.res.budget}, depth: j.depth + 1,
	}
}

// graceRun is the parallel source of a spilling join whose probe side the workers
// make: they partition it, then the pairs are joined and handed to sink.
func (j *hashJoin) graceRun(run parallelRun) parallelRun {
	return func(ctx context.Context, sink func(w int, b *vector.Batch) error) error {
		if err := run(ctx, func(w int, b *vector.Batch) error {
			return j.grace.add(ctx, j.compactProbe(b), false)
		}); err != nil {
			return err
		}
		if err := j.grace.finish(false); err != nil {
			return err
		}
		for {
			b, err := j.grace.nextBatch(ctx)
			if err != nil || b == nil {
				return err
			}
			if err := sink(0, b); err != nil {
				return err
			}
		}
	}
}

// spillOp reads a spill file's batches, and removes the file when closed. A nil
// file is empty.
type spillOp struct {
	f *spillFile
	r *spillReader
}

func (s *spillOp) Next(ctx context.Context) (*vector.Batch, error) {
	if s.f == nil {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, errs.New(errs.Canceled, "statement canceled: %w", err)
	}
	if s.r == nil {
		r, err := s.f.reader()
		if err != nil {
			return nil, err
		}
		s.r = r
	}
	return s.r.next()
}

func (s *spillOp) Close() {
	if s.f != nil {
		s.f.remove()
		s.f = nil
	}
}
