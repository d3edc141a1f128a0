package deletes

import (
	"context"
	"math/rand/v2"
	"testing"
)

// TestEncodingRoundTrips writes random sets, inline descriptors included, and reads
// them back.
func TestEncodingRoundTrips(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := 0; n < 20; n++ {
		want := randomPositions(r)
		p, err := FromSorted(want)
		if err != nil {
			t.Fatal(err)
		}
		q, err := DecodeRoaring64(p.AppendRoaring64(nil))
		if err != nil {
			t.Fatalf("%d positions: %v", len(want), err)
		}
		checkPositions(t, r, q, want)
		d := InlineDV(p)
		q, err = d.Read(context.Background(), nil, "")
		if err != nil {
			t.Fatalf("inline %d positions: %v", len(want), err)
		}
		checkPositions(t, r, q, want)
	}
}
