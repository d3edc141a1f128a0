package lore

import (
	"errors"
	"testing"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/sql"
)

func TestParseMemoryLimit(t *testing.T) {
	for in, want := range map[string]int64{
		"1073741824": 1 << 30, "512MiB": 512 << 20, "4GiB": 4 << 30, "4gib": 4 << 30, "2GB": 2e9,
		"1.5 GiB": 3 << 29, "100MB": 1e8, "2048KiB": 2 << 20, "1TiB": 1 << 40, " 64mib ": 64 << 20, "3000000B": 3e6,
	} {
		got, err := ParseMemoryLimit(in)
		if err != nil || got != want {
			t.Errorf("ParseMemoryLimit(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "4 GiBs", "-1GiB", "1e9", "lots", "4G", "1.2.3MB", "1000", "99999999999TiB"} {
		if _, err := ParseMemoryLimit(in); !errors.Is(err, errs.ErrInvalidSetting) {
			t.Errorf("ParseMemoryLimit(%q): %v, want INVALID_SETTING", in, err)
		}
	}
}

func TestMemoryLimitFromEnvironment(t *testing.T) {
	t.Setenv(memoryLimitEnv, "256MiB")
	o := Options{}
	if err := o.fromEnvironment(); err != nil || o.MemoryLimit != 256<<20 {
		t.Fatalf("from %s=256MiB: %d, %v", memoryLimitEnv, o.MemoryLimit, err)
	}
	o = Options{MemoryLimit: 1 << 30}
	if err := o.fromEnvironment(); err != nil || o.MemoryLimit != 1<<30 {
		t.Fatalf("an explicit limit gave way to the environment: %d, %v", o.MemoryLimit, err)
	}
	t.Setenv(memoryLimitEnv, "a lot")
	o = Options{}
	if err := o.fromEnvironment(); !errors.Is(err, errs.ErrInvalidSetting) {
		t.Fatalf("a bad %s: %v", memoryLimitEnv, err)
	}
}

func TestMemoryLimitOf(t *testing.T) {
	if got, want := memoryLimitOf(16<<30), int64(16<<30)/10*8; got != want {
		t.Errorf("16 GiB: %d, want %d", got, want)
	}
	if got := memoryLimitOf(0); got != 4<<30 {
		t.Errorf("unknown memory: %d, want 4 GiB", got)
	}
}

func TestMemoryLimitSetting(t *testing.T) {
	s := defaultSettings()
	if err := s.set("memory_limit", sql.OptionValue{Kind: sql.ValueString, Str: "1GiB"}, 0); err != nil || s.MemoryLimit != 1<<30 {
		t.Fatalf("memory_limit = '1GiB': %d, %v", s.MemoryLimit, err)
	}
	if err := s.set("MEMORY_LIMIT", sql.OptionValue{Kind: sql.ValueInt, Int: 64 << 20}, 0); err != nil || s.MemoryLimit != 64<<20 {
		t.Fatalf("memory_limit = 67108864: %d, %v", s.MemoryLimit, err)
	}
	if err := s.set("memory_limit", sql.OptionValue{Kind: sql.ValueString, Str: "big"}, 0); !errors.Is(err, errs.ErrInvalidSetting) {
		t.Fatalf("memory_limit = 'big': %v", err)
	}
}
