package kernels

// Comparison loops over plain slices, one per operator, writing a packed result
// bitmap eight rows at a time without branches on the data. The float versions
// order NaN above every number and equal to itself, as DuckDB does; -0 equals +0
// by IEEE rules.

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
	var w byte
	for i, x := range a {
		y := b[i]
		w |= b2u(x == y) << (i & 7)
		if i&7 == 7 {
			out[i>>3] = w
			w = 0
		}
	}
	if len(a)&7 != 0 {
		out[len(a)>>3] = w
	}
}

func cmpEqVC[T cmp.Ordered](a []T, y T, out []byte) {
	var w byte
	for i, x := range a {
		w |= b2u(x == y) << (i & 7)
		if i&7 == 7 {
			out[i>>3] = w
			w = 0
		}
	}
	if len(a)&7 != 0 {
		out[len(a)>>3] = w
	}
}

func cmpNeVV[T cmp.Ordered](a, b []T, out []byte) {
	b = b[:len(a)]
	var w byte
	for i, x := range a {
		y := b[i]
		w |= b2u(x != y) << (i & 7)
		if i&7 == 7 {
			out[i>>3] = w
			w = 0
		}
	}
	if len(a)&7 != 0 {
		out[len(a)>>3] = w
	}
}

func cmpNeVC[T cmp.Ordered](a []T, y T, out []byte) {
	var w byte
	for i, x := range a {
		w |= b2u(x != y) << (i & 7)
		if i&7 == 7 {
			out[i>>3] = w
			w = 0
		}
	}
	if len(a)&7 != 0 {
		out[len(a)>>3] = w
	}
}

func cmpLtVV[T cmp.Ordered](a, b []T, out []byte) {
	b = b[:len(a)]
	var w byte
	for i, x := range a {
		y := b[i]
		w |= b2u(x < y) << (i & 7)
		if i&7 == 7 {
			out[i>>3] = w
			w = 0
		}
	}
	if len(a)&7 != 0 {
		out[len(a)>>3] = w
	}
}

func cmpLtVC[T cmp.Ordered](a []T, y T, out []byte) {
	var w byte
	for i, x := range a {
		w |= b2u(x < y) << (i & 7)
		if i&7 == 7 {
			out[i>>3] = w
			w = 0
		}
	}
	if len(a)&7 != 0 {
		out[len(a)>>3] = w
	}
}

func cmpLeVV[T cmp.Ordered](a, b []T, out []byte) {
	b = b[:len(a)]
	var w byte
	for i, x := range a {
		y := b[i]
		w |= b2u(x <= y) << (i & 7)
		if i&7 == 7 {
			out[i>>3] = w
			w = 0
		}
	}
	if len(a)&7 != 0 {
		out[len(a)>>3] = w
	}
}

func cmpLeVC[T cmp.Ordered](a []T, y T, out []byte) {
	var w byte
	for i, x := range a {
		w |= b2u(x <= y) << (i & 7)
		if i&7 == 7 {
			out[i>>3] = w
			w = 0
		}
	}
	if len(a)&7 != 0 {
		out[len(a)>>3] = w
	}
}

func cmpGtVV[T cmp.Ordered](a, b []T, out []byte) {
	b = b[:len(a)]
	var w byte
	for i, x := range a {
		y := b[i]
		w |= b2u(x > y) << (i & 7)
		if i&7 == 7 {
			out[i>>3] = w
			w = 0
		}
	}
	if len(a)&7 != 0 {
		out[len(a)>>3] = w
	}
}

func cmpGtVC[T cmp.Ordered](a []T, y T, out []byte) {
	var w byte
	for i, x := range a {
		w |= b2u(x > y) << (i & 7)
		if i&7 == 7 {
			out[i>>3] = w
			w = 0
		}
	}
	if len(a)&7 != 0 {
		out[len(a)>>3] = w
	}
}

func cmpGeVV[T cmp.Ordered](a, b []T, out []byte) {
	b = b[:len(a)]
	var w byte
	for i, x := range a {
		y := b[i]
		w |= b2u(x >= y) << (i & 7)
		if i&7 == 7 {
			out[i>>3] = w
			w = 0
		}
	}
	if len(a)&7 != 0 {
		out[len(a)>>3] = w
	}
}

func cmpGeVC[T cmp.Ordered](a []T, y T, out []byte) {
	var w byte
	for i, x := range a {
		w |= b2u(x >= y) << (i & 7)
		if i&7 == 7 {
			out[i>>3] = w
			w = 0
		}
	}
	if len(a)&7 != 0 {
		out[len(a)>>3] = w
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
	var w byte
	for i, x := range a {
		y := b[i]
		w |= b2u(x == y || (x != x && y != y)) << (i & 7)
		if i&7 == 7 {
			out[i>>3] = w
			w = 0
		}
	}
	if len(a)&7 != 0 {
		out[len(a)>>3] = w
	}
}

func cmpFloatEqVC[T float32 | float64](a []T, y T, out []byte) {
	var w byte
	for i, x := range a {
		w |= b2u(x == y || (x != x && y != y)) << (i & 7)
		if i&7 == 7 {
			out[i>>3] = w
			w = 0
		}
	}
	if len(a)&7 != 0 {
		out[len(a)>>3] = w
	}
}

func cmpFloatNeVV[T float32 | float64](a, b []T, out []byte) {
	b = b[:len(a)]
	var w byte
	for i, x := range a {
		y := b[i]
		w |= b2u(!(x == y || (x != x && y != y))) << (i & 7)
		if i&7 == 7 {
			out[i>>3] = w
			w = 0
		}
	}
	if len(a)&7 != 0 {
		out[len(a)>>3] = w
	}
}

func cmpFloatNeVC[T float32 | float64](a []T, y T, out []byte) {
	var w byte
	for i, x := range a {
		w |= b2u(!(x == y || (x != x && y != y))) << (i & 7)
		if i&7 == 7 {
			out[i>>3] = w
			w = 0
		}
	}
	if len(a)&7 != 0 {
		out[len(a)>>3] = w
	}
}

func cmpFloatLtVV[T float32 | float64](a, b []T, out []byte) {
	b = b[:len(a)]
	var w byte
	for i, x := range a {
		y := b[i]
		w |= b2u(x < y || (x == x && y != y)) << (i & 7)
		if i&7 == 7 {
			out[i>>3] = w
			w = 0
		}
	}
	if len(a)&7 != 0 {
		out[len(a)>>3] = w
	}
}

func cmpFloatLtVC[T float32 | float64](a []T, y T, out []byte) {
	var w byte
	for i, x := range a {
		w |= b2u(x < y || (x == x && y != y)) << (i & 7)
		if i&7 == 7 {
			out[i>>3] = w
			w = 0
		}
	}
	if len(a)&7 != 0 {
		out[len(a)>>3] = w
	}
}

func cmpFloatLeVV[T float32 | float64](a, b []T, out []byte) {
	b = b[:len(a)]
	var w byte
	for i, x := range a {
		y := b[i]
		w |= b2u(x <= y || y != y) << (i & 7)
		if i&7 == 7 {
			out[i>>3] = w
			w = 0
		}
	}
	if len(a)&7 != 0 {
		out[len(a)>>3] = w
	}
}

func cmpFloatLeVC[T float32 | float64](a []T, y T, out []byte) {
	var w byte
	for i, x := range a {
		w |= b2u(x <= y || y != y) << (i & 7)
		if i&7 == 7 {
			out[i>>3] = w
			w = 0
		}
	}
	if len(a)&7 != 0 {
		out[len(a)>>3] = w
	}
}

func cmpFloatGtVV[T float32 | float64](a, b []T, out []byte) {
	b = b[:len(a)]
	var w byte
	for i, x := range a {
		y := b[i]
		w |= b2u(y < x || (y == y && x != x)) << (i & 7)
		if i&7 == 7 {
			out[i>>3] = w
			w = 0
		}
	}
	if len(a)&7 != 0 {
		out[len(a)>>3] = w
	}
}

func cmpFloatGtVC[T float32 | float64](a []T, y T, out []byte) {
	var w byte
	for i, x := range a {
		w |= b2u(y < x || (y == y && x != x)) << (i & 7)
		if i&7 == 7 {
			out[i>>3] = w
			w = 0
		}
	}
	if len(a)&7 != 0 {
		out[len(a)>>3] = w
	}
}

func cmpFloatGeVV[T float32 | float64](a, b []T, out []byte) {
	b = b[:len(a)]
	var w byte
	for i, x := range a {
		y := b[i]
		w |= b2u(y <= x || x != x) << (i & 7)
		if i&7 == 7 {
			out[i>>3] = w
			w = 0
		}
	}
	if len(a)&7 != 0 {
		out[len(a)>>3] = w
	}
}

func cmpFloatGeVC[T float32 | float64](a []T, y T, out []byte) {
	var w byte
	for i, x := range a {
		w |= b2u(y <= x || x != x) << (i & 7)
		if i&7 == 7 {
			out[i>>3] = w
			w = 0
		}
	}
	if len(a)&7 != 0 {
		out[len(a)>>3] = w
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
