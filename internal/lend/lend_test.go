package lend

import "testing"

// A returned buffer is lent again; one held is not; a nil pool allocates.
func TestPoolLendsWhatComesBack(t *testing.T) {
	var p Pool
	a, b := p.Take(64), p.Take(64)
	p.Return(func(x []byte) bool { return &x[0] == &b[0] })
	c := p.Take(32)
	if &c[0] != &a[0] {
		t.Errorf("the returned buffer was not lent again")
	}
	p.Return(nil)
	for range 3 {
		if d := p.Take(16); &d[0] == &b[0] {
			t.Errorf("a held buffer was lent again")
		}
	}
	if big := p.Take(1 << 10); len(big) != 1<<10 {
		t.Errorf("len %d", len(big))
	}
	if v := Values[int64](nil, 5); len(v) != 5 || v[4] != 0 {
		t.Errorf("nil pool: %v", v)
	}
	var q Pool
	v := Values[int32](&q, 10)
	v[9] = 7
	q.Return(nil)
	if w := Values[int32](&q, 10); &w[0] != &v[0] || w[9] != 7 {
		t.Errorf("values are not lent again uncleared")
	}
}
