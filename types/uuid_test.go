package types

import "testing"

func TestUUIDText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
		{"{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
		{"a0eebc999c0b4ef8bb6d6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
		{"-a0ee-bc99-9c0b4ef8bb6d6bb9bd380a11-", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
		{"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1", ""},
		{"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a111", ""},
		{" a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", ""},
		{"g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", ""},
		{"{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", ""},
		{"", ""},
	} {
		u, ok := ParseUUID(c.in)
		got := ""
		if ok {
			got = FormatUUID(string(u[:]))
		}
		if got != c.want {
			t.Errorf("ParseUUID(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := Name(UUID); got != "UUID" {
		t.Errorf("Name(UUID) = %q", got)
	}
	if dt, err := Parse("uuid"); err != nil || !IsUUID(dt) {
		t.Errorf("Parse(uuid) = %v, %v", dt, err)
	}
	if IsUUID(Binary) || !IsBinary(UUID) {
		t.Error("UUID must be told apart from BLOB and stored as binary")
	}
	if v := (Value{Type: UUID, S: "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"}); v.String() != "00010203-0405-0607-0809-0a0b0c0d0e0f" {
		t.Errorf("UUID value renders as %s", v)
	}
}
