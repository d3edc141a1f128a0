// Package jsontext writes JSON text by hand where encoding/json would cost a value
// per cell: the command line's json output and the server's results share it.
package jsontext

import "unicode/utf8"

// AppendString appends s as a JSON string. Unlike encoding/json it leaves <, > and &
// alone (the output is not embedded in HTML); invalid UTF-8 becomes U+FFFD, and U+2028
// and U+2029 are escaped, as encoding/json does, so the text is valid JavaScript too.
func AppendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			// Valid JSON, but not valid JavaScript: escape as encoding/json does.
			dst = append(dst, `\u202`...)
			dst = append(dst, hex[r&0xF])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}
