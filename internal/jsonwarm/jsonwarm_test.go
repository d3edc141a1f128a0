package jsonwarm

import (
	"encoding/json"
	"reflect"
	"testing"
)

type leaf struct {
	N int    `json:"n"`
	S string `json:"s"`
}

type node struct {
	Name     string           `json:"name"`
	Leaves   []leaf           `json:"leaves"`
	ByName   map[string]*leaf `json:"by_name"`
	Next     *node            `json:"next"` // recursive: fill must end
	Bytes    []byte           `json:"bytes"`
	Odd      map[int]leaf     `json:"odd"`
	hidden   leaf
	Explodes exploder `json:"explodes"`
}

// exploder's JSON methods panic, as a type's own might on a made-up value.
type exploder struct{}

func (exploder) MarshalJSON() ([]byte, error) { panic("boom") }

// TestTypesFillsAndSurvives checks that fill reaches every kind of nested value,
// ends on a recursive type, and that Types survives a type whose JSON methods
// panic.
func TestTypesFillsAndSurvives(t *testing.T) {
	var n node
	fill(reflect.ValueOf(&n).Elem(), 0)
	if len(n.Leaves) != 1 || len(n.ByName) != 1 || n.ByName[""] == nil || n.Next == nil || n.Next.Next == nil {
		t.Fatalf("fill left nested values empty: %+v", n)
	}
	if n.Bytes != nil || n.Odd != nil {
		t.Errorf("fill filled bytes or a map with non-string keys: %+v", n)
	}
	Types(node{}, &node{}, leaf{}) // must not panic
	// The warmed types still encode and decode as ever.
	b, err := json.Marshal(leaf{N: 3, S: "x"})
	if err != nil || string(b) != `{"n":3,"s":"x"}` {
		t.Fatalf("after Types: %s, %v", b, err)
	}
}
