package plan

import (
	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// walkPG calls f on n and, while f returns true, on every node below it.
func walkPG(n *pg.Node, f func(*pg.Node) bool) {
	if n == nil || !f(n) {
		return
	}
	walkMessage(n.ProtoReflect(), f)
}

func walkMessage(m protoreflect.Message, f func(*pg.Node) bool) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				visit(l.Get(i).Message(), f)
			}
		case fd.Message() != nil && !fd.IsMap():
			visit(v.Message(), f)
		}
		return true
	})
}

func visit(m protoreflect.Message, f func(*pg.Node) bool) {
	if node, ok := m.Interface().(*pg.Node); ok {
		walkPG(node, f)
		return
	}
	walkMessage(m, f)
}
