package main

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Machine describes where a benchmark ran.
type Machine struct {
	CPU           string `json:"cpu"`
	Cores         int    `json:"cores"`
	GOMAXPROCS    int    `json:"gomaxprocs"`
	MemoryBytes   int64  `json:"memory_bytes,omitempty"`
	OS            string `json:"os"`
	GoVersion     string `json:"go_version"`
	DuckDBVersion string `json:"duckdb_version"`
}

func describeMachine(ctx context.Context) Machine {
	m := Machine{
		CPU:        cpuModel(),
		Cores:      runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		OS:         runtime.GOOS + "/" + runtime.GOARCH,
		GoVersion:  runtime.Version(),
	}
	m.MemoryBytes = memTotal()
	if v, err := duckdbVersion(ctx); err == nil {
		m.DuckDBVersion = v
	} else {
		m.DuckDBVersion = "unknown (" + oneLine(err.Error()) + ")"
	}
	return m
}

// cpuModel is the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		return v
	}
	return "unknown " + runtime.GOARCH
}

func memTotal() int64 {
	v := strings.TrimSuffix(procField("/proc/meminfo", "MemTotal"), " kB")
	kb, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0
	}
	return kb * 1024
}

// procField is the value of the first "key: value" line of a /proc file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
