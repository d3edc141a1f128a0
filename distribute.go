package lore

import (
	"context"
	"fmt"
	"io"

	"github.com/loredb/lore/dist"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage/s3"
)

// distribute runs on Beam's workers the part of query plan node that reads a table,
// under execution = 'beam' (or 'auto', when it reads at least the engine's
// Beam.Above): an aggregate over one table's scan (filtered and projected). The
// coordinator — this engine — has classified the scan's zones already; it ships
// only those left to read (exec.PlanZones), with the aggregate as
// a plan fragment, and every worker reads its zones at the statement's version. The
// partials the workers return, merged, join the aggregate's seeds (the partials
// answered from statistics), and the aggregate reads nothing more: the rest of the
// statement runs here. A plan that reads no table (statistics answered it) is left
// as it is; any other shape is INVALID_SETTING under 'beam' and runs locally under
// 'auto'. The memory the merged partials hold is reserved from env's budget until
// *release is called.
func (e *Engine) distribute(ctx context.Context, env *exec.Env, node plan.Node, s *settingsValues, x *Execution, release *func()) error {
	a, scan, fragment, err := distributedPart(node)
	if err != nil && s.Execution != "beam" {
		return nil // not a shape Beam runs: 'auto' leaves it here
	}
	if err != nil || a == nil {
		return err
	}
	z, err := exec.PlanZones(ctx, env, scan)
	if err != nil {
		return err
	}
	if !e.onBeam(s.Execution, z.Bytes) {
		return nil
	}
	ids := z.IDs
	z.Claim(env)
	d, err := e.newDistributed(len(ids))
	if err != nil {
		return err
	}
	d.Bytes = z.Bytes
	x.Distributed = d
	if len(ids) == 0 {
		// Every zone skipped or answered: the seeds are the whole answer.
		a.Input = &plan.Values{Cols: a.Input.Columns()}
		return nil
	}
	ref := scan.Ref
	l := ref.Listing
	tref := dist.TableRefOf(l.Format, ref.Location, l, ref.Version)
	cfg, err := e.refS3(ctx, ref)
	if err != nil {
		return err
	}
	e.addressS3(&tref, cfg)
	zones, err := dist.ZoneRefsOf(l, ids, tref)
	if err != nil {
		return err
	}
	job, err := dist.MarshalJob(fragment, zones)
	if err != nil {
		return err
	}
	var partial *dist.Partial
	err = e.runJob(ctx, "aggregate", job, s.MemoryLimit, d, func(r io.Reader) error {
		b, took, err := dist.ReadPartialResults(ctx, r, len(zones))
		if err != nil {
			return err
		}
		d.addZoneTimes(took)
		// The merged groups are held until the statement ends: their memory, about
		// twice their byte form's once decoded and merged, is the statement's.
		held := 2 * int64(len(b))
		if err := env.Budget.Reserve(held); err != nil {
			return err
		}
		*release = func() { env.Budget.Release(held) }
		partial, err = dist.UnmarshalPartial(a, b)
		if err != nil {
			return err
		}
		return seedWith(a, partial)
	})
	if err != nil {
		return err
	}
	if x.Detail != "" {
		x.Detail += "; "
	}
	x.Detail += fmt.Sprintf("%d row groups read on Beam (%s)", len(zones), d.Runner)
	return nil
}

// refS3 is the S3-compatible store ref's table is read through: its own storage
// options' for a registered table, the engine's otherwise.
func (e *Engine) refS3(ctx context.Context, ref *plan.TableRef) (s3.Config, error) {
	if ref.Name == "" {
		return baseS3(e.opts), nil
	}
	t, err := e.catalog.Lookup(ctx, ref.Name)
	if err != nil {
		return s3.Config{}, err
	}
	return e.tableS3(t.Storage), nil
}

// seedWith merges p into a's seeds and leaves a nothing to read.
func seedWith(a *plan.Aggregate, p *dist.Partial) error {
	m, err := dist.NewMerger(a)
	if err != nil {
		return err
	}
	if a.Seeds != nil {
		if err := m.Add(dist.NewPartial(a, a.SeedKeys, a.Seeds)); err != nil {
			return err
		}
	}
	if err := m.Add(p); err != nil {
		return err
	}
	merged := m.Result()
	a.Seeds, a.SeedKeys = merged.States, merged.Keys
	a.Input = &plan.Values{Cols: a.Input.Columns()}
	return nil
}

// distributedPart finds in node the aggregate that reads the statement's only
// scan, with its fragment for workers: nil when the statement reads no table,
// INVALID_SETTING when it reads one otherwise, or more than one, or workers could
// not run the aggregate.
func distributedPart(node plan.Node) (*plan.Aggregate, *plan.Scan, []byte, error) {
	a, scan, err := distributedScan(node)
	if err != nil || a == nil {
		return nil, nil, nil, err
	}
	if scan.Ref.Version == (source.Version{}) {
		return nil, nil, nil, errs.New(errs.InvalidSetting, "execution = 'beam' reads one version of a table on every worker, and the version of %q cannot be taken", scan.Ref.Location)
	}
	fragment, err := dist.MarshalFragment(a)
	if err != nil {
		return nil, nil, nil, err
	}
	// What workers cannot read back (a function they cannot resolve from its name
	// and arguments) is refused here, before anything runs.
	if _, _, err := dist.UnmarshalFragment(fragment); err != nil {
		return nil, nil, nil, errs.New(errs.InvalidSetting, "execution = 'beam' cannot send this statement's aggregate to workers: %v", err)
	}
	return a, scan, fragment, nil
}

// distributedScan finds in node the aggregate over the statement's only scan.
func distributedScan(node plan.Node) (*plan.Aggregate, *plan.Scan, error) {
	var scans []*plan.Scan
	var aggs []*plan.Aggregate
	plan.WalkNodes(node, func(n plan.Node) {
		switch x := n.(type) {
		case *plan.Scan:
			scans = append(scans, x)
		case *plan.Aggregate:
			aggs = append(aggs, x)
		}
	})
	switch len(scans) {
	case 0:
		return nil, nil, nil
	case 1:
	default:
		return nil, nil, errs.New(errs.InvalidSetting, "execution = 'beam' runs an aggregate over one table's scan on workers; this statement reads %d tables", len(scans))
	}
	var why error
	for _, a := range aggs {
		scan, err := dist.Distributable(a)
		if err == nil && scan == scans[0] {
			return a, scan, nil
		}
		if err != nil && why == nil {
			why = err
		}
	}
	if why == nil {
		why = errs.New(errs.InvalidSetting, "execution = 'beam' runs an aggregate over one table's scan on workers; this statement reads its table without aggregating it")
	}
	return nil, nil, why
}
