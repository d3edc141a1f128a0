package lore

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/sysmem"
	"github.com/loredb/lore/storage/s3"
)

// defaultMemoryLimit is 80 % of the memory the process may use (sysmem.Total), 4
// GiB when that cannot be read.
func defaultMemoryLimit() int64 { return memoryLimitOf(sysmem.Total()) }

// memoryLimitOf is 80 % of total bytes, 4 GiB when total is unknown (0).
func memoryLimitOf(total int64) int64 {
	if total <= 0 {
		return 4 << 30
	}
	return total / 10 * 8
}

// byteUnits are the units ParseMemoryLimit accepts, in lower case.
var byteUnits = map[string]float64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

// ParseMemoryLimit reads a memory size: a number of bytes, or a number with a unit
// of B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024) in any
// case: "1073741824", "512MiB", "4GiB", "2GB", "1.5 GiB". Anything else, or a size
// below 1 MiB, is INVALID_SETTING.
func ParseMemoryLimit(s string) (int64, error) {
	n, err := parseBytes(s)
	if err != nil {
		return 0, errs.New(errs.InvalidSetting, "invalid memory limit %q: %w", s, err)
	}
	if n < 1<<20 {
		return 0, errs.New(errs.InvalidSetting, "memory limit %q is below 1 MiB", s)
	}
	return n, nil
}

// parseBytes reads a size as ParseMemoryLimit does, with no lower bound.
func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, okUnit := byteUnits[unit]
	v, err := strconv.ParseFloat(num, 64)
	if num == "" || err != nil || !okUnit {
		return 0, errors.New("want a number of bytes or a size such as 512MiB, 4GiB or 2GB")
	}
	n := v * mult
	if n > math.MaxInt64/2 {
		return 0, errors.New("too large")
	}
	return int64(n), nil
}

// memoryLimitEnv is the environment variable that sets the memory limit when
// Options.MemoryLimit does not.
const memoryLimitEnv = "LORE_MEMORY_LIMIT"

// fromEnvironment takes the memory limit from $LORE_MEMORY_LIMIT when the options
// leave it unset.
func (o *Options) fromEnvironment() error {
	if v := os.Getenv(cacheBytesEnv); o.CacheBytes == 0 && v != "" {
		n, err := ParseMemoryLimit(v)
		if err != nil {
			return errs.New(errs.InvalidSetting, "%s: %w", cacheBytesEnv, err)
		}
		o.CacheBytes = n
	}
	if o.S3 == nil {
		c, err := s3.ConfigFromEnv()
		if err != nil {
			return errs.New(errs.InvalidSetting, "%w", err)
		}
		o.S3 = &c
	}
	if err := o.spillFromEnvironment(); err != nil {
		return err
	}
	if err := o.Beam.aboveFromEnvironment(); err != nil {
		return err
	}
	v := os.Getenv(memoryLimitEnv)
	if o.MemoryLimit > 0 || v == "" {
		return nil
	}
	n, err := ParseMemoryLimit(v)
	if err != nil {
		return errs.New(errs.InvalidSetting, "%s: %w", memoryLimitEnv, err)
	}
	o.MemoryLimit = n
	return nil
}

// cacheBytesEnv sets Options.CacheBytes when the options leave it unset.
const cacheBytesEnv = "LORE_CACHE_BYTES"

// Validate reports options that cannot work.
func (o *Options) Validate() error {
	if o.MemoryLimit < 1<<20 {
		return errs.New(errs.InvalidSetting, "memory limit %d bytes is below 1 MiB", o.MemoryLimit)
	}
	if o.Beam.Above != 0 {
		// A size threshold sends statements to Beam unasked: a runner that cannot
		// be reached is the configuration's error, found before any statement.
		if err := o.Beam.validate(); err != nil {
			return err
		}
		c, err := o.Beam.command()
		if err != nil {
			return err
		}
		if _, err := exec.LookPath(c); err != nil {
			return errs.New(errs.InvalidSetting, "the lore-beam command %q cannot run: %v", c, err)
		}
	}
	return o.Ceilings.validate()
}

// The environment variables that set the spill directory and bound when Options
// leave them unset.
const (
	spillDirEnv   = "LORE_TMP"
	spillLimitEnv = "LORE_SPILL_LIMIT"
)

// defaultSpillLimit bounds spill files when nothing else does: far more than any
// memory budget, far less than a disk that also holds the data.
const defaultSpillLimit = 64 << 30

// spillFromEnvironment takes the spill directory from $LORE_TMP and the spill bound
// from $LORE_SPILL_LIMIT when the options leave them unset.
func (o *Options) spillFromEnvironment() error {
	if o.SpillDir == "" {
		o.SpillDir = os.Getenv(spillDirEnv)
	}
	if v := os.Getenv(spillLimitEnv); o.SpillLimit == 0 && v != "" {
		n, err := parseBytes(v)
		if err != nil {
			return errs.New(errs.InvalidSetting, "%s: invalid size %q: %w", spillLimitEnv, v, err)
		}
		o.SpillLimit = n
	}
	return nil
}
