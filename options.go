package lore

import (
	"bufio"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/storage/s3"
)

func defaultHome() string {
	if h := os.Getenv("LORE_HOME"); h != "" {
		return h
	}
	return ".lore"
}

// The files the default memory limit is read from; tests point them elsewhere.
var (
	meminfoPath    = "/proc/meminfo"
	selfCgroupPath = "/proc/self/cgroup"
	cgroupRoot     = "/sys/fs/cgroup"
)

// defaultMemoryLimit is 80 % of the memory the process may use: the machine's
// (MemTotal), or its control group's limit when that is lower (a container's). 4 GiB
// when neither can be read.
func defaultMemoryLimit() int64 {
	total := memTotal(meminfoPath)
	if cg := cgroupMemoryLimit(selfCgroupPath, cgroupRoot); cg > 0 && (total <= 0 || cg < total) {
		total = cg
	}
	if total <= 0 {
		return 4 << 30
	}
	return total / 10 * 8
}

// memTotal is MemTotal from a meminfo file in bytes, 0 when it cannot be read.
func memTotal(path string) int64 { return procKB(path, "MemTotal:") * 1024 }

// procKB reads the "Key: N kB" line of a /proc file (meminfo, a process's status),
// 0 when it is absent or cannot be read.
func procKB(path, key string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), key); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// cgroupMemoryLimit is the memory limit of the process's control group in bytes, 0
// when there is none or it cannot be read. self is the process's cgroup file
// (/proc/self/cgroup) and root where the hierarchy is mounted: version 2 keeps the
// limit in memory.max ("max": none), version 1 in memory/memory.limit_in_bytes (a
// number near 2^63: none). The group's own directory is tried first, then the root
// (inside a container the group is usually the root).
func cgroupMemoryLimit(self, root string) int64 {
	var dirs2, dirs1 []string
	if data, err := os.ReadFile(self); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			// hierarchy-ID:controllers:path
			parts := strings.SplitN(line, ":", 3)
			if len(parts) != 3 || strings.Contains(parts[2], "..") {
				continue
			}
			switch {
			case parts[0] == "0" && parts[1] == "":
				// A hybrid layout mounts version 2 under unified.
				dirs2 = append(dirs2, filepath.Join(root, parts[2]), filepath.Join(root, "unified", parts[2]))
			case strings.Contains(","+parts[1]+",", ",memory,"):
				dirs1 = append(dirs1, filepath.Join(root, "memory", parts[2]))
			}
		}
	}
	dirs2 = append(dirs2, root)
	dirs1 = append(dirs1, filepath.Join(root, "memory"))
	read := func(path string) (int64, bool) {
		data, err := os.ReadFile(path)
		if err != nil {
			return 0, false
		}
		v := strings.TrimSpace(string(data))
		if v == "max" {
			return 0, true
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 || n >= 1<<60 {
			return 0, true
		}
		return n, true
	}
	for _, d := range dirs2 {
		if n, ok := read(filepath.Join(d, "memory.max")); ok {
			return n
		}
	}
	for _, d := range dirs1 {
		if n, ok := read(filepath.Join(d, "memory.limit_in_bytes")); ok {
			return n
		}
	}
	return 0
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
