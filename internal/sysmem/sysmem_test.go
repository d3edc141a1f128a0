package sysmem

import (
	"os"
	"path/filepath"
	"testing"
)

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

func TestCgroupLimit(t *testing.T) {
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
		if got := cgroupLimit(self, root); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

func TestAvailableTakesTheLowerOfMachineAndGroup(t *testing.T) {
	meminfo := filepath.Join(t.TempDir(), "meminfo")
	if err := os.WriteFile(meminfo, []byte("MemTotal:       16777216 kB\nMemFree: 1 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	self, root := cgroupTree(t, "0::/\n", map[string]string{"memory.max": "4294967296\n"})
	if got := Available(meminfo, self, root); got != 4<<30 {
		t.Fatalf("16 GiB machine, 4 GiB group: %d, want 4 GiB", got)
	}
	self, root = cgroupTree(t, "0::/\n", map[string]string{"memory.max": "max\n"})
	if got := Available(meminfo, self, root); got != 16<<30 {
		t.Fatalf("16 GiB machine, no group limit: %d, want 16 GiB", got)
	}
	if got := Available(filepath.Join(t.TempDir(), "none"), self, root); got != 0 {
		t.Fatalf("nothing readable: %d, want 0", got)
	}
}

func TestTotalReadsThisSystem(t *testing.T) {
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		t.Skip("no /proc/meminfo")
	}
	if Total() <= 0 {
		t.Fatal("Total found no memory on a system with /proc/meminfo")
	}
}
