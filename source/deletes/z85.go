package deletes

import "strings"

// z85Alphabet is ZeroMQ's Z85 alphabet (https://rfc.zeromq.org/spec/32/), the one Delta
// uses for inline deletion vectors and for the UUIDs in deletion vector file names.
const z85Alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

// z85Value maps a byte to its digit value, or -1 outside the alphabet.
var z85Value = func() (v [256]int8) {
	for i := range v {
		v[i] = -1
	}
	for i := 0; i < len(z85Alphabet); i++ {
		v[z85Alphabet[i]] = int8(i)
	}
	return v
}()

// z85Pad is the character the Rust writers put before a short final group.
const z85Pad = '#'

// Z85Decode decodes Delta's Z85 text s into size bytes. Every group of 5 characters is
// 4 big-endian bytes, so s has 5*ceil(size/4) characters. When size is not a multiple
// of 4 the final group is in one of the two forms writers produce:
//   - zero-padded (Delta/Spark): the data was padded with zero bytes to a multiple of 4
//     and encoded whole; the group decodes to 4 bytes whose trailing padding must be
//     zero and is dropped;
//   - '#'-padded (delta-kernel-rs, delta-rs): the k remaining bytes are one big-endian
//     number written in k+1 digits after 4-k '#' characters ("##093" is 03 00).
//
// The two cannot be confused: '#' is the largest digit, and a group of 5 digits
// starting with it exceeds 2^32, so a whole group never starts with '#'.
func Z85Decode(s string, size int) ([]byte, error) {
	if size < 0 || size > len(s) {
		return nil, corrupt("Z85 text of %d characters cannot hold %d bytes", len(s), size)
	}
	groups := (size + 3) / 4
	if len(s) != 5*groups {
		return nil, corrupt("Z85 text of %d characters for %d bytes, want %d characters", len(s), size, 5*groups)
	}
	out := make([]byte, 0, 4*groups)
	for g := 0; g < groups; g++ {
		group := s[5*g : 5*g+5]
		tail := size - 4*g // bytes still to produce
		if tail < 4 && group[0] == z85Pad {
			pads := len(group) - len(strings.TrimLeft(group, string(z85Pad)))
			if pads != 4-tail {
				return nil, corrupt("Z85 group %d has %d '#' characters for %d bytes, want %d", g, pads, tail, 4-tail)
			}
			v, err := z85Number(group[pads:], g)
			if err != nil {
				return nil, err
			}
			if v>>(8*tail) != 0 {
				return nil, corrupt("Z85 group %d: %q is more than %d bytes", g, group, tail)
			}
			for i := tail - 1; i >= 0; i-- {
				out = append(out, byte(v>>(8*i)))
			}
			break
		}
		v, err := z85Number(group, g)
		if err != nil {
			return nil, err
		}
		if v > 0xFFFFFFFF {
			return nil, corrupt("Z85 group %d: %q is more than 4 bytes", g, group)
		}
		out = append(out, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	if len(out) > size {
		for _, b := range out[size:] {
			if b != 0 {
				return nil, corrupt("Z85 text: padding after byte %d is not zero", size)
			}
		}
		out = out[:size]
	}
	return out, nil
}

// z85Number is the value of up to 5 Z85 digits.
func z85Number(digits string, group int) (uint64, error) {
	var v uint64
	for i := 0; i < len(digits); i++ {
		d := z85Value[digits[i]]
		if d < 0 {
			return 0, corrupt("Z85 group %d: %q is not a Z85 character", group, digits[i])
		}
		v = v*85 + uint64(d)
	}
	return v, nil
}
