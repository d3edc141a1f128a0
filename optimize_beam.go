package lore

import (
	"context"
	"io"

	"github.com/loredb/lore/catalog"
	"github.com/loredb/lore/dist"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/publish"
	"github.com/loredb/lore/parquet"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage"
)

// samplesPerRange is about how many sampled keys choose each cut between the ranges
// of a distributed OPTIMIZE.
const samplesPerRange = 64

// rewriteOnBeam is rewrite with the rows sorted and written by Beam's workers
// (dist.SortSpec): every row group of g's files ships, pinned to version v of the
// table; the rows are cut into ranges of about a file each (opts.FileBytes of the
// files rewritten), each sorted and written into the staging directory by one
// worker; the files, range after range, are published in place of g's files. A
// run that does not account for every row it was given publishes nothing. The
// run's figures are added to total.
func (e *Engine) rewriteOnBeam(ctx context.Context, t catalog.Table, location string, l *source.Listing, v source.Version, store storage.Store,
	g fileGroup, opts parquet.LayoutOptions, memoryLimit int64, res *optimizeResult, total *Distributed) error {
	sub := g.listing(l)
	footers, err := sub.Footers(ctx, store)
	if err != nil {
		return err
	}
	var ids []plan.ZoneID
	var rows int64
	for k, f := range footers {
		for rg := range f.NumRowGroups() {
			ids = append(ids, plan.ZoneID{File: g.files[k], RowGroup: rg})
			rows += f.RowGroup(rg).Rows
		}
	}
	size := sub.Bytes()
	if len(ids) == 0 {
		// Files of no row group: nothing to sort, and nothing to ship.
		return stageRewrite(location, l, g, res, func(*publish.Stage) ([]parquet.WrittenFile, error) { return nil, nil })
	}
	spec, err := sortSpec(t, l, opts)
	if err != nil {
		return err
	}
	fileBytes := opts.WithDefaults().FileBytes
	spec.Ranges = int(min(int64(len(ids))*samplesPerRange, max(1, (size+fileBytes-1)/fileBytes)))
	spec.Samples = max(1, min(4096, (spec.Ranges*samplesPerRange+len(ids)-1)/len(ids)))
	tref := dist.TableRefOf(t.Format, t.Location, l, v)
	e.addressS3(&tref, e.tableS3(t.Storage))
	zones, err := dist.ZoneRefsOf(l, ids, tref)
	if err != nil {
		return err
	}
	d, err := e.newDistributed(len(zones))
	if err != nil {
		return err
	}
	d.Bytes = size
	return stageRewrite(location, l, g, res, func(stage *publish.Stage) ([]parquet.WrittenFile, error) {
		spec.Stage = stage.Dir
		work, err := spec.MarshalBinary()
		if err != nil {
			return nil, err
		}
		job, err := dist.MarshalJob(work, zones)
		if err != nil {
			return nil, err
		}
		var written []parquet.WrittenFile
		err = e.runJob(ctx, "optimize", job, memoryLimit, d, func(r io.Reader) error {
			files, took, err := dist.ReadSortResults(ctx, r, len(zones), spec.Ranges)
			if err != nil {
				return err
			}
			d.addZoneTimes(took)
			var got int64
			for _, fs := range files {
				for _, f := range fs {
					got += f.Rows
					written = append(written, f)
				}
			}
			if got != rows {
				return errs.New(errs.Internal, "the workers wrote %d rows of the %d they were given", got, rows)
			}
			return nil
		})
		if err == nil {
			err = ctx.Err()
		}
		if err != nil {
			return nil, guarded(ctx, err)
		}
		total.add(d)
		return written, nil
	})
}

// sortSpec is the sort of table t's rows, listed by l, that OPTIMIZE writes as opts
// say: the columns its files hold, sorted by its clustering columns.
func sortSpec(t catalog.Table, l *source.Listing, opts parquet.LayoutOptions) (*dist.SortSpec, error) {
	spec := &dist.SortSpec{Layout: opts}
	spec.Layout.ClusteredBy = nil
	index := map[int]int{}
	for i, f := range l.Schema.Fields() {
		if l.Partition(i) < 0 {
			index[i] = len(spec.Columns)
			spec.Columns = append(spec.Columns, f.Name)
		}
	}
	for _, name := range t.ClusteredBy {
		k, ok := index[source.FieldIndex(l.Schema, name)]
		if !ok {
			return nil, errs.New(errs.OptimizeInvalid, "table %s is clustered by %q, which its files do not hold", t.Name, name)
		}
		spec.Keys = append(spec.Keys, k)
		spec.Layout.ClusteredBy = append(spec.Layout.ClusteredBy, spec.Columns[k])
	}
	return spec, nil
}

// add adds the figures of another run of the same statement to d.
func (d *Distributed) add(o *Distributed) {
	d.Runner, d.Endpoint = o.Runner, o.Endpoint
	d.ZonesShipped += o.ZonesShipped
	d.Bytes += o.Bytes
	d.PipelineMS += o.PipelineMS
	d.MergeMS += o.MergeMS
	d.WorkerMS += o.WorkerMS
	d.SlowestZoneMS = max(d.SlowestZoneMS, o.SlowestZoneMS)
}
