package main

import "testing"

func TestCompareResults(t *testing.T) {
	cases := []struct {
		name       string
		lore, duck [][]string
		order      Order
		want       bool
	}{
		{"equal unordered", [][]string{{"a", "1"}, {"b", "2"}}, [][]string{{"b", "2"}, {"a", "1"}}, Order{}, true},
		{"float within tolerance", [][]string{{"a", "0.30000000000000004"}}, [][]string{{"a", "0.3"}}, Order{}, true},
		{"float beyond tolerance", [][]string{{"a", "0.3001"}}, [][]string{{"a", "0.3"}}, Order{}, false},
		{"decimal against float", [][]string{{"12.50"}}, [][]string{{"12.5"}}, Order{}, true},
		{"near zero", [][]string{{"1e-13"}}, [][]string{{"0.0"}}, Order{}, true},
		{"integers exact", [][]string{{"1000000000"}}, [][]string{{"1000000001"}}, Order{}, false},
		{"null against zero", [][]string{{"NULL"}}, [][]string{{"0"}}, Order{}, false},
		{"row count", [][]string{{"1"}}, [][]string{{"1"}, {"1"}}, Order{}, false},
		{"multiset counts", [][]string{{"1"}, {"1"}, {"2"}}, [][]string{{"1"}, {"2"}, {"2"}}, Order{}, false},
		// Floats a hair apart sort in different places when they lead the row.
		{"tolerance across sort", [][]string{{"1.0000000000001", "x"}, {"1.0", "y"}},
			[][]string{{"1.0", "x"}, {"1.0000000000001", "y"}}, Order{}, true},
		{"ordered", [][]string{{"1"}, {"2"}}, [][]string{{"2"}, {"1"}}, Order{Keys: []int{0}}, false},
		{"ties in any order", [][]string{{"a", "5"}, {"b", "5"}, {"c", "1"}}, [][]string{{"b", "5"}, {"a", "5"}, {"c", "1"}},
			Order{Keys: []int{1}}, true},
		{"tied rows must match", [][]string{{"a", "5"}, {"b", "5"}, {"c", "1"}}, [][]string{{"a", "5"}, {"x", "5"}, {"c", "1"}},
			Order{Keys: []int{1}}, false},
		{"limit cuts the last tie group", [][]string{{"a", "9"}, {"b", "5"}, {"c", "5"}}, [][]string{{"a", "9"}, {"d", "5"}, {"b", "5"}},
			Order{Keys: []int{1}, Limited: true}, true},
		{"limit keeps earlier groups", [][]string{{"a", "9"}, {"b", "5"}}, [][]string{{"z", "9"}, {"b", "5"}},
			Order{Keys: []int{1}, Limited: true}, false},
		{"limit still checks keys", [][]string{{"a", "9"}, {"b", "5"}}, [][]string{{"a", "9"}, {"b", "4"}},
			Order{Keys: []int{1}, Limited: true}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, diff := compareResults(c.lore, c.duck, c.order, 0)
			if got != c.want {
				t.Errorf("got %v (%s), want %v", got, diff, c.want)
			}
			if !got && diff == "" {
				t.Error("no description of the difference")
			}
		})
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{7}, 7}, {nil, 0}} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
