package kernels

// Comparison loops over plain slices, one per operator, writing the packed result
// bitmap a byte (eight rows) at a time without branches on the data. The float
// versions order NaN above every number and equal to itself, as DuckDB does; -0
// equals +0 by IEEE rules.

import "cmp"

// b2u is 1 for true; the compiler turns it into a flag move, not a branch.
func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func cmpEqVV[T cmp.Ordered](a, b []T, out []byte) {
	b = b[:len(a)]
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		p, q := a[i:i+8:i+8], b[i:i+8:i+8]
		out[i>>3] = b2u(p[0] == q[0]) |
			b2u(p[1] == q[1])<<1 |
			b2u(p[2] == q[2])<<2 |
			b2u(p[3] == q[3])<<3 |
			b2u(p[4] == q[4])<<4 |
			b2u(p[5] == q[5])<<5 |
			b2u(p[6] == q[6])<<6 |
			b2u(p[7] == q[7])<<7
	}
	for i := n; i < len(a); i++ {
		out[i>>3] |= b2u(a[i] == b[i]) << (i & 7)
	}
}

func cmpEqVC[T cmp.Ordered](a []T, y T, out []byte) {
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		p := a[i : i+8 : i+8]
		out[i>>3] = b2u(p[0] == y) |
			b2u(p[1] == y)<<1 |
			b2u(p[2] == y)<<2 |
			b2u(p[3] == y)<<3 |
			b2u(p[4] == y)<<4 |
			b2u(p[5] == y)<<5 |
			b2u(p[6] == y)<<6 |
			b2u(p[7] == y)<<7
	}
	for i := n; i < len(a); i++ {
		out[i>>3] |= b2u(a[i] == y) << (i & 7)
	}
}

func cmpNeVV[T cmp.Ordered](a, b []T, out []byte) {
	b = b[:len(a)]
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		p, q := a[i:i+8:i+8], b[i:i+8:i+8]
		out[i>>3] = b2u(p[0] != q[0]) |
			b2u(p[1] != q[1])<<1 |
			b2u(p[2] != q[2])<<2 |
			b2u(p[3] != q[3])<<3 |
			b2u(p[4] != q[4])<<4 |
			b2u(p[5] != q[5])<<5 |
			b2u(p[6] != q[6])<<6 |
			b2u(p[7] != q[7])<<7
	}
	for i := n; i < len(a); i++ {
		out[i>>3] |= b2u(a[i] != b[i]) << (i & 7)
	}
}

func cmpNeVC[T cmp.Ordered](a []T, y T, out []byte) {
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		p := a[i : i+8 : i+8]
		out[i>>3] = b2u(p[0] != y) |
			b2u(p[1] != y)<<1 |
			b2u(p[2] != y)<<2 |
			b2u(p[3] != y)<<3 |
			b2u(p[4] != y)<<4 |
			b2u(p[5] != y)<<5 |
			b2u(p[6] != y)<<6 |
			b2u(p[7] != y)<<7
	}
	for i := n; i < len(a); i++ {
		out[i>>3] |= b2u(a[i] != y) << (i & 7)
	}
}

func cmpLtVV[T cmp.Ordered](a, b []T, out []byte) {
	b = b[:len(a)]
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		p, q := a[i:i+8:i+8], b[i:i+8:i+8]
		out[i>>3] = b2u(p[0] < q[0]) |
			b2u(p[1] < q[1])<<1 |
			b2u(p[2] < q[2])<<2 |
			b2u(p[3] < q[3])<<3 |
			b2u(p[4] < q[4])<<4 |
			b2u(p[5] < q[5])<<5 |
			b2u(p[6] < q[6])<<6 |
			b2u(p[7] < q[7])<<7
	}
	for i := n; i < len(a); i++ {
		out[i>>3] |= b2u(a[i] < b[i]) << (i & 7)
	}
}

func cmpLtVC[T cmp.Ordered](a []T, y T, out []byte) {
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		p := a[i : i+8 : i+8]
		out[i>>3] = b2u(p[0] < y) |
			b2u(p[1] < y)<<1 |
			b2u(p[2] < y)<<2 |
			b2u(p[3] < y)<<3 |
			b2u(p[4] < y)<<4 |
			b2u(p[5] < y)<<5 |
			b2u(p[6] < y)<<6 |
			b2u(p[7] < y)<<7
	}
	for i := n; i < len(a); i++ {
		out[i>>3] |= b2u(a[i] < y) << (i & 7)
	}
}

func cmpLeVV[T cmp.Ordered](a, b []T, out []byte) {
	b = b[:len(a)]
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		p, q := a[i:i+8:i+8], b[i:i+8:i+8]
		out[i>>3] = b2u(p[0] <= q[0]) |
			b2u(p[1] <= q[1])<<1 |
			b2u(p[2] <= q[2])<<2 |
			b2u(p[3] <= q[3])<<3 |
			b2u(p[4] <= q[4])<<4 |
			b2u(p[5] <= q[5])<<5 |
			b2u(p[6] <= q[6])<<6 |
			b2u(p[7] <= q[7])<<7
	}
	for i := n; i < len(a); i++ {
		out[i>>3] |= b2u(a[i] <= b[i]) << (i & 7)
	}
}

func cmpLeVC[T cmp.Ordered](a []T, y T, out []byte) {
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		p := a[i : i+8 : i+8]
		out[i>>3] = b2u(p[0] <= y) |
			b2u(p[1] <= y)<<1 |
			b2u(p[2] <= y)<<2 |
			b2u(p[3] <= y)<<3 |
			b2u(p[4] <= y)<<4 |
			b2u(p[5] <= y)<<5 |
			b2u(p[6] <= y)<<6 |
			b2u(p[7] <= y)<<7
	}
	for i := n; i < len(a); i++ {
		out[i>>3] |= b2u(a[i] <= y) << (i & 7)
	}
}

func cmpGtVV[T cmp.Ordered](a, b []T, out []byte) {
	b = b[:len(a)]
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		p, q := a[i:i+8:i+8], b[i:i+8:i+8]
		out[i>>3] = b2u(p[0] > q[0]) |
			b2u(p[1] > q[1])<<1 |
			b2u(p[2] > q[2])<<2 |
			b2u(p[3] > q[3])<<3 |
			b2u(p[4] > q[4])<<4 |
			b2u(p[5] > q[5])<<5 |
			b2u(p[6] > q[6])<<6 |
			b2u(p[7] > q[7])<<7
	}
	for i := n; i < len(a); i++ {
		out[i>>3] |= b2u(a[i] > b[i]) << (i & 7)
	}
}

func cmpGtVC[T cmp.Ordered](a []T, y T, out []byte) {
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		p := a[i : i+8 : i+8]
		out[i>>3] = b2u(p[0] > y) |
			b2u(p[1] > y)<<1 |
			b2u(p[2] > y)<<2 |
			b2u(p[3] > y)<<3 |
			b2u(p[4] > y)<<4 |
			b2u(p[5] > y)<<5 |
			b2u(p[6] > y)<<6 |
			b2u(p[7] > y)<<7
	}
	for i := n; i < len(a); i++ {
		out[i>>3] |= b2u(a[i] > y) << (i & 7)
	}
}

func cmpGeVV[T cmp.Ordered](a, b []T, out []byte) {
	b = b[:len(a)]
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		p, q := a[i:i+8:i+8], b[i:i+8:i+8]
		out[i>>3] = b2u(p[0] >= q[0]) |
			b2u(p[1] >= q[1])<<1 |
			b2u(p[2] >= q[2])<<2 |
			b2u(p[3] >= q[3])<<3 |
			b2u(p[4] >= q[4])<<4 |
			b2u(p[5] >= q[5])<<5 |
			b2u(p[6] >= q[6])<<6 |
			b2u(p[7] >= q[7])<<7
	}
	for i := n; i < len(a); i++ {
		out[i>>3] |= b2u(a[i] >= b[i]) << (i & 7)
	}
}

func cmpGeVC[T cmp.Ordered](a []T, y T, out []byte) {
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		p := a[i : i+8 : i+8]
		out[i>>3] = b2u(p[0] >= y) |
			b2u(p[1] >= y)<<1 |
			b2u(p[2] >= y)<<2 |
			b2u(p[3] >= y)<<3 |
			b2u(p[4] >= y)<<4 |
			b2u(p[5] >= y)<<5 |
			b2u(p[6] >= y)<<6 |
			b2u(p[7] >= y)<<7
	}
	for i := n; i < len(a); i++ {
		out[i>>3] |= b2u(a[i] >= y) << (i & 7)
	}
}

func cmpVV[T cmp.Ordered](op cmpOp, a, b []T, out []byte) {
	switch op {
	case opEq:
		cmpEqVV(a, b, out)
	case opNe:
		cmpNeVV(a, b, out)
	case opLt:
		cmpLtVV(a, b, out)
	case opLe:
		cmpLeVV(a, b, out)
	case opGt:
		cmpGtVV(a, b, out)
	case opGe:
		cmpGeVV(a, b, out)
	}
}

func cmpVC[T cmp.Ordered](op cmpOp, a []T, b T, out []byte) {
	switch op {
	case opEq:
		cmpEqVC(a, b, out)
	case opNe:
		cmpNeVC(a, b, out)
	case opLt:
		cmpLtVC(a, b, out)
	case opLe:
		cmpLeVC(a, b, out)
	case opGt:
		cmpGtVC(a, b, out)
	case opGe:
		cmpGeVC(a, b, out)
	}
}

func cmpFloatEqVV[T float32 | float64](a, b []T, out []byte) {
	b = b[:len(a)]
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		p, q := a[i:i+8:i+8], b[i:i+8:i+8]
		out[i>>3] = b2u(p[0] == q[0] || (p[0] != p[0] && q[0] != q[0])) |
			b2u(p[1] == q[1] || (p[1] != p[1] && q[1] != q[1]))<<1 |
			b2u(p[2] == q[2] || (p[2] != p[2] && q[2] != q[2]))<<2 |
			b2u(p[3] == q[3] || (p[3] != p[3] && q[3] != q[3]))<<3 |
			b2u(p[4] == q[4] || (p[4] != p[4] && q[4] != q[4]))<<4 |
			b2u(p[5] == q[5] || (p[5] != p[5] && q[5] != q[5]))<<5 |
			b2u(p[6] == q[6] || (p[6] != p[6] && q[6] != q[6]))<<6 |
			b2u(p[7] == q[7] || (p[7] != p[7] && q[7] != q[7]))<<7
	}
	for i := n; i < len(a); i++ {
		out[i>>3] |= b2u(a[i] == b[i] || (a[i] != a[i] && b[i] != b[i])) << (i & 7)
	}
}

func cmpFloatEqVC[T float32 | float64](a []T, y T, out []byte) {
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		p := a[i : i+8 : i+8]
		out[i>>3] = b2u(p[0] == y || (p[0] != p[0] && y != y)) |
			b2u(p[1] == y || (p[1] != p[1] && y != y))<<1 |
			b2u(p[2] == y || (p[2] != p[2] && y != y))<<2 |
			b2u(p[3] == y || (p[3] != p[3] && y != y))<<3 |
			b2u(p[4] == y || (p[4] != p[4] && y != y))<<4 |
			b2u(p[5] == y || (p[5] != p[5] && y != y))<<5 |
			b2u(p[6] == y || (p[6] != p[6] && y != y))<<6 |
			b2u(p[7] == y || (p[7] != p[7] && y != y))<<7
	}
	for i := n; i < len(a); i++ {
		out[i>>3] |= b2u(a[i] == y || (a[i] != a[i] && y != y)) << (i & 7)
	}
}

func cmpFloatNeVV[T float32 | float64](a, b []T, out []byte) {
	b = b[:len(a)]
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		p, q := a[i:i+8:i+8], b[i:i+8:i+8]
		out[i>>3] = b2u(!(p[0] == q[0] || (p[0] != p[0] && q[0] != q[0]))) |
			b2u(!(p[1] == q[1] || (p[1] != p[1] && q[1] != q[1])))<<1 |
			b2u(!(p[2] == q[2] || (p[2] != p[2] && q[2] != q[2])))<<2 |
			b2u(!(p[3] == q[3] || (p[3] != p[3] && q[3] != q[3])))<<3 |
			b2u(!(p[4] == q[4] || (p[4] != p[4] && q[4] != q[4])))<<4 |
			b2u(!(p[5] == q[5] || (p[5] != p[5] && q[5] != q[5])))<<5 |
			b2u(!(p[6] == q[6] || (p[6] != p[6] && q[6] != q[6])))<<6 |
			b2u(!(p[7] == q[7] || (p[7] != p[7] && q[7] != q[7])))<<7
	}
	for i := n; i < len(a); i++ {
		out[i>>3] |= b2u(!(a[i] == b[i] || (a[i] != a[i] && b[i] != b[i]))) << (i & 7)
	}
}

func cmpFloatNeVC[T float32 | float64](a []T, y T, out []byte) {
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		p := a[i : i+8 : i+8]
		out[i>>3] = b2u(!(p[0] == y || (p[0] != p[0] && y != y))) |
			b2u(!(p[1] == y || (p[1] != p[1] && y != y)))<<1 |
			b2u(!(p[2] == y || (p[2] != p[2] && y != y)))<<2 |
			b2u(!(p[3] == y || (p[3] != p[3] && y != y)))<<3 |
			b2u(!(p[4] == y || (p[4] != p[4] && y != y)))<<4 |
			b2u(!(p[5] == y || (p[5] != p[5] && y != y)))<<5 |
			b2u(!(p[6] == y || (p[6] != p[6] && y != y)))<<6 |
			b2u(!(p[7] == y || (p[7] != p[7] && y != y)))<<7
	}
	for i := n; i < len(a); i++ {
		out[i>>3] |= b2u(!(a[i] == y || (a[i] != a[i] && y != y))) << (i & 7)
	}
}

func cmpFloatLtVV[T float32 | float64](a, b []T, out []byte) {
	b = b[:len(a)]
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		p, q := a[i:i+8:i+8], b[i:i+8:i+8]
		out[i>>3] = b2u(p[0] < q[0] || (p[0] == p[0] && q[0] != q[0])) |
			b2u(p[1] < q[1] || (p[1] == p[1] && q[1] != q[1]))<<1 |
			b2u(p[2] < q[2] || (p[2] == p[2] && q[2] != q[2]))<<2 |
			b2u(p[3] < q[3] || (p[3] == p[3] && q[3] != q[3]))<<3 |
			b2u(p[4] < q[4] || (p[4] == p[4] && q[4] != q[4]))<<4 |
			b2u(p[5] < q[5] || (p[5] == p[5] && q[5] != q[5]))<<5 |
			b2u(p[6] < q[6] || (p[6] == p[6] && q[6] != q[6]))<<6 |
			b2u(p[7] < q[7] || (p[7] == p[7] && q[7] != q[7]))<<7
	}
	for i := n; i < len(a); i++ {
		out[i>>3] |= b2u(a[i] < b[i] || (a[i] == a[i] && b[i] != b[i])) << (i & 7)
	}
}

func cmpFloatLtVC[T float32 | float64](a []T, y T, out []byte) {
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		p := a[i : i+8 : i+8]
		out[i>>3] = b2u(p[0] < y || (p[0] == p[0] && y != y)) |
			b2u(p[1] < y || (p[1] == p[1] && y != y))<<1 |
			b2u(p[2] < y || (p[2] == p[2] && y != y))<<2 |
			b2u(p[3] < y || (p[3] == p[3] && y != y))<<3 |
			b2u(p[4] < y || (p[4] == p[4] && y != y))<<4 |
			b2u(p[5] < y || (p[5] == p[5] && y != y))<<5 |
			b2u(p[6] < y || (p[6] == p[6] && y != y))<<6 |
			b2u(p[7] < y || (p[7] == p[7] && y != y))<<7
	}
	for i := n; i < len(a); i++ {
		out[i>>3] |= b2u(a[i] < y || (a[i] == a[i] && y != y)) << (i & 7)
	}
}

func cmpFloatLeVV[T float32 | float64](a, b []T, out []byte) {
	b = b[:len(a)]
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		p, q := a[i:i+8:i+8], b[i:i+8:i+8]
		out[i>>3] = b2u(p[0] <= q[0] || q[0] != q[0]) |
			b2u(p[1] <= q[1] || q[1] != q[1])<<1 |
			b2u(p[2] <= q[2] || q[2] != q[2])<<2 |
			b2u(p[3] <= q[3] || q[3] != q[3])<<3 |
			b2u(p[4] <= q[4] || q[4] != q[4])<<4 |
			b2u(p[5] <= q[5] || q[5] != q[5])<<5 |
			b2u(p[6] <= q[6] || q[6] != q[6])<<6 |
			b2u(p[7] <= q[7] || q[7] != q[7])<<7
	}
	for i := n; i < len(a); i++ {
		out[i>>3] |= b2u(a[i] <= b[i] || b[i] != b[i]) << (i & 7)
	}
}

func cmpFloatLeVC[T float32 | float64](a []T, y T, out []byte) {
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		p := a[i : i+8 : i+8]
		out[i>>3] = b2u(p[0] <= y || y != y) |
			b2u(p[1] <= y || y != y)<<1 |
			b2u(p[2] <= y || y != y)<<2 |
			b2u(p[3] <= y || y != y)<<3 |
			b2u(p[4] <= y || y != y)<<4 |
			b2u(p[5] <= y || y != y)<<5 |
			b2u(p[6] <= y || y != y)<<6 |
			b2u(p[7] <= y || y != y)<<7
	}
	for i := n; i < len(a); i++ {
		out[i>>3] |= b2u(a[i] <= y || y != y) << (i & 7)
	}
}

func cmpFloatGtVV[T float32 | float64](a, b []T, out []byte) {
	b = b[:len(a)]
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		p, q := a[i:i+8:i+8], b[i:i+8:i+8]
		out[i>>3] = b2u(q[0] < p[0] || (q[0] == q[0] && p[0] != p[0])) |
			b2u(q[1] < p[1] || (q[1] == q[1] && p[1] != p[1]))<<1 |
			b2u(q[2] < p[2] || (q[2] == q[2] && p[2] != p[2]))<<2 |
			b2u(q[3] < p[3] || (q[3] == q[3] && p[3] != p[3]))<<3 |
			b2u(q[4] < p[4] || (q[4] == q[4] && p[4] != p[4]))<<4 |
			b2u(q[5] < p[5] || (q[5] == q[5] && p[5] != p[5]))<<5 |
			b2u(q[6] < p[6] || (q[6] == q[6] && p[6] != p[6]))<<6 |
			b2u(q[7] < p[7] || (q[7] == q[7] && p[7] != p[7]))<<7
	}
	for i := n; i < len(a); i++ {
		out[i>>3] |= b2u(b[i] < a[i] || (b[i] == b[i] && a[i] != a[i])) << (i & 7)
	}
}

func cmpFloatGtVC[T float32 | float64](a []T, y T, out []byte) {
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		p := a[i : i+8 : i+8]
		out[i>>3] = b2u(y < p[0] || (y == y && p[0] != p[0])) |
			b2u(y < p[1] || (y == y && p[1] != p[1]))<<1 |
			b2u(y < p[2] || (y == y && p[2] != p[2]))<<2 |
			b2u(y < p[3] || (y == y && p[3] != p[3]))<<3 |
			b2u(y < p[4] || (y == y && p[4] != p[4]))<<4 |
			b2u(y < p[5] || (y == y && p[5] != p[5]))<<5 |
			b2u(y < p[6] || (y == y && p[6] != p[6]))<<6 |
			b2u(y < p[7] || (y == y && p[7] != p[7]))<<7
	}
	for i := n; i < len(a); i++ {
		out[i>>3] |= b2u(y < a[i] || (y == y && a[i] != a[i])) << (i & 7)
	}
}

func cmpFloatGeVV[T float32 | float64](a, b []T, out []byte) {
	b = b[:len(a)]
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		p, q := a[i:i+8:i+8], b[i:i+8:i+8]
		out[i>>3] = b2u(q[0] <= p[0] || p[0] != p[0]) |
			b2u(q[1] <= p[1] || p[1] != p[1])<<1 |
			b2u(q[2] <= p[2] || p[2] != p[2])<<2 |
			b2u(q[3] <= p[3] || p[3] != p[3])<<3 |
			b2u(q[4] <= p[4] || p[4] != p[4])<<4 |
			b2u(q[5] <= p[5] || p[5] != p[5])<<5 |
			b2u(q[6] <= p[6] || p[6] != p[6])<<6 |
			b2u(q[7] <= p[7] || p[7] != p[7])<<7
	}
	for i := n; i < len(a); i++ {
		out[i>>3] |= b2u(b[i] <= a[i] || a[i] != a[i]) << (i & 7)
	}
}

func cmpFloatGeVC[T float32 | float64](a []T, y T, out []byte) {
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		p := a[i : i+8 : i+8]
		out[i>>3] = b2u(y <= p[0] || p[0] != p[0]) |
			b2u(y <= p[1] || p[1] != p[1])<<1 |
			b2u(y <= p[2] || p[2] != p[2])<<2 |
			b2u(y <= p[3] || p[3] != p[3])<<3 |
			b2u(y <= p[4] || p[4] != p[4])<<4 |
			b2u(y <= p[5] || p[5] != p[5])<<5 |
			b2u(y <= p[6] || p[6] != p[6])<<6 |
			b2u(y <= p[7] || p[7] != p[7])<<7
	}
	for i := n; i < len(a); i++ {
		out[i>>3] |= b2u(y <= a[i] || a[i] != a[i]) << (i & 7)
	}
}

func cmpFloatVV[T float32 | float64](op cmpOp, a, b []T, out []byte) {
	switch op {
	case opEq:
		cmpFloatEqVV(a, b, out)
	case opNe:
		cmpFloatNeVV(a, b, out)
	case opLt:
		cmpFloatLtVV(a, b, out)
	case opLe:
		cmpFloatLeVV(a, b, out)
	case opGt:
		cmpFloatGtVV(a, b, out)
	case opGe:
		cmpFloatGeVV(a, b, out)
	}
}

func cmpFloatVC[T float32 | float64](op cmpOp, a []T, b T, out []byte) {
	switch op {
	case opEq:
		cmpFloatEqVC(a, b, out)
	case opNe:
		cmpFloatNeVC(a, b, out)
	case opLt:
		cmpFloatLtVC(a, b, out)
	case opLe:
		cmpFloatLeVC(a, b, out)
	case opGt:
		cmpFloatGtVC(a, b, out)
	case opGe:
		cmpFloatGeVC(a, b, out)
	}
}

// selectVC writes to out the rows of sel (every row of a when sel is nil) where
// a[row] op c holds, and returns them: every row is written, and the count
// advances by the comparison.
func selectVC[T cmp.Ordered](op cmpOp, a []T, c T, sel []int32, out []int32) []int32 {
	k := 0
	if sel == nil {
		out = out[:len(a)]
		switch op {
		case opEq:
			for i, x := range a {
				out[k] = int32(i)
				k += b2i(x == c)
			}
		case opNe:
			for i, x := range a {
				out[k] = int32(i)
				k += b2i(x != c)
			}
		case opLt:
			for i, x := range a {
				out[k] = int32(i)
				k += b2i(x < c)
			}
		case opLe:
			for i, x := range a {
				out[k] = int32(i)
				k += b2i(x <= c)
			}
		case opGt:
			for i, x := range a {
				out[k] = int32(i)
				k += b2i(x > c)
			}
		case opGe:
			for i, x := range a {
				out[k] = int32(i)
				k += b2i(x >= c)
			}
		}
		return out[:k]
	}
	out = out[:len(sel)]
	switch op {
	case opEq:
		for _, i := range sel {
			out[k] = i
			k += b2i(a[i] == c)
		}
	case opNe:
		for _, i := range sel {
			out[k] = i
			k += b2i(a[i] != c)
		}
	case opLt:
		for _, i := range sel {
			out[k] = i
			k += b2i(a[i] < c)
		}
	case opLe:
		for _, i := range sel {
			out[k] = i
			k += b2i(a[i] <= c)
		}
	case opGt:
		for _, i := range sel {
			out[k] = i
			k += b2i(a[i] > c)
		}
	case opGe:
		for _, i := range sel {
			out[k] = i
			k += b2i(a[i] >= c)
		}
	}
	return out[:k]
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
