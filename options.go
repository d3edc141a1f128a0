package lore

import (
	"bufio"
	"github.com/loredb/lore/errs"
	"os"
	"strconv"
	"strings"
)

func defaultHome() string {
	if h := os.Getenv("LORE_HOME"); h != "" {
		return h
	}
	return ".lore"
}

// defaultMemoryLimit is 80 % of the machine's memory (MemTotal), or 4 GiB when it
// cannot be read.
func defaultMemoryLimit() int64 {
	f, err := os.Open("/proc/meminfo")
	if err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) >= 2 && fields[0] == "MemTotal:" {
				if kb, err := strconv.ParseInt(fields[1], 10, 64); err == nil {
					return kb * 1024 * 8 / 10
				}
			}
		}
	}
	return 4 << 30
}

// Validate reports options that cannot work.
func (o *Options) Validate() error {
	if o.MemoryLimit < 1<<20 {
		return errs.New(errs.InvalidSetting, "memory limit %d bytes is below 1 MiB", o.MemoryLimit)
	}
	return nil
}
