package pgast

// MakeStrNode is a Node holding the String str, as a name part or an operator.
func MakeStrNode(str string) *Node {
	return &Node{Node: &Node_String_{String_: &String{Sval: str}}}
}

// MakeColumnRefNode is a Node holding a column reference made of fields, at byte
// offset location of the statement's text.
func MakeColumnRefNode(fields []*Node, location int32) *Node {
	return &Node{Node: &Node_ColumnRef{ColumnRef: &ColumnRef{Fields: fields, Location: location}}}
}

// MakeAExprNode is a Node holding an operator expression of kind kind, operator
// name, operands lexpr and rexpr, at byte offset location.
func MakeAExprNode(kind A_Expr_Kind, name []*Node, lexpr, rexpr *Node, location int32) *Node {
	return &Node{Node: &Node_AExpr{AExpr: &A_Expr{Kind: kind, Name: name, Lexpr: lexpr, Rexpr: rexpr, Location: location}}}
}
