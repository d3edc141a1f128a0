package lore

import (
	"errors"
	"os"
	"path/filepath"
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

// cgroupTree writes a fake /proc/self/cgroup and control-group hierarchy.
func cgroupTree(t *testing.T, self string, files map[string]string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	selfPath := filepath.Join(dir, "self-cgroup")
	if err := os.WriteFile(selfPath, []byte(self), 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "cgroup")
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return selfPath, root
}

func TestCgroupMemoryLimit(t *testing.T) {
	cases := []struct {
		name  string
		self  string
		files map[string]string
		want  int64
	}{
		{"v2 own group", "0::/user.slice/job\n", map[string]string{"user.slice/job/memory.max": "2147483648\n", "memory.max": "max\n"}, 2 << 30},
		{"v2 root (container)", "0::/\n", map[string]string{"memory.max": "1073741824\n"}, 1 << 30},
		{"v2 unlimited", "0::/\n", map[string]string{"memory.max": "max\n"}, 0},
		{"v2 hybrid", "0::/job\n", map[string]string{"unified/job/memory.max": "536870912"}, 512 << 20},
		{"v1", "4:memory:/docker/abc\n0::/\n", map[string]string{"memory/docker/abc/memory.limit_in_bytes": "3221225472\n"}, 3 << 30},
		{"v1 mount root", "4:memory:/elsewhere\n", map[string]string{"memory/memory.limit_in_bytes": "1610612736\n"}, 3 << 29},
		{"v1 unlimited", "4:memory:/\n", map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712\n"}, 0},
		{"none", "", nil, 0},
		{"garbage", "0::/\n", map[string]string{"memory.max": "lots\n"}, 0},
	}
	for _, c := range cases {
		self, root := cgroupTree(t, c.self, c.files)
		if got := cgroupMemoryLimit(self, root); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

func TestDefaultMemoryLimitTakesTheLowerOfMachineAndGroup(t *testing.T) {
	defer func(m, s, r string) { meminfoPath, selfCgroupPath, cgroupRoot = m, s, r }(meminfoPath, selfCgroupPath, cgroupRoot)
	dir := t.TempDir()
	meminfoPath = filepath.Join(dir, "meminfo")
	if err := os.WriteFile(meminfoPath, []byte("MemTotal:       16777216 kB\nMemFree: 1 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	selfCgroupPath, cgroupRoot = cgroupTree(t, "0::/\n", map[string]string{"memory.max": "4294967296\n"})
	if got, want := defaultMemoryLimit(), int64(4<<30)/10*8; got != want {
		t.Fatalf("16 GiB machine, 4 GiB group: %d, want %d", got, want)
	}
	selfCgroupPath, cgroupRoot = cgroupTree(t, "0::/\n", map[string]string{"memory.max": "max\n"})
	if got, want := defaultMemoryLimit(), int64(16<<30)/10*8; got != want {
		t.Fatalf("16 GiB machine, no group limit: %d, want %d", got, want)
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
