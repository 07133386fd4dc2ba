// Package compat checks that this library keeps segmentio/kafka-go's API: a
// kafka-go program must build after changing only its import path. It is a
// module of its own so that the library never depends on kafka-go.
package compat

import (
	"go/constant"
	"go/importer"
	"go/token"
	"go/types"
	"sort"
	"strings"
	"testing"
)

const (
	theirs = "github.com/segmentio/kafka-go"
	ours   = "github.com/rackfetch/kafka-go"
)

// packages are the packages of kafka-go a program imports, by path below
// the module root.
var packages = []string{
	"", "sasl", "sasl/plain", "sasl/scram", "compress", "compress/gzip", "compress/snappy",
	"compress/lz4", "compress/zstd", "gzip", "snappy", "lz4", "zstd", "topics",
	// A module of its own in both libraries.
	"sasl/aws_msk_iam_v2",
}

// knownDifferences are the deliberate ones, with the reason. Anything else
// that differs fails the test.
var knownDifferences = map[string]string{
	// kafka-go's Request/Response are its own protocol package's Message;
	// ours are package protocol's Request/Response. A program that only
	// passes a Client's values around is unaffected; one that implements a
	// RoundTripper writes against package protocol.
	"method RoundTripper.RoundTrip": "takes package protocol's Request",
	"method (*Transport).RoundTrip": "takes package protocol's Request",
	"method Request.ApiKey":         "package protocol's Request has Key()",
	"method Response.ApiKey":        "package protocol's Response has Key()",
}

func TestAPICompatibility(t *testing.T) {
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "source", nil)
	for _, sub := range packages {
		sub := sub
		name := "kafka"
		if sub != "" {
			name = sub
		}
		t.Run(name, func(t *testing.T) {
			tp, err := imp.Import(join(theirs, sub))
			if err != nil {
				t.Fatalf("loading kafka-go's %s: %v", name, err)
			}
			op, err := imp.Import(join(ours, sub))
			if err != nil {
				t.Fatalf("loading our %s: %v", name, err)
			}
			if sub == "" {
				learnAliases(tp)
			}
			diffs := compare(tp, op)
			for _, d := range diffs {
				if reason, ok := knownDifferences[d.what]; ok && sub == "" {
					t.Logf("known difference: %s (%s)", d.what, reason)
					continue
				}
				t.Errorf("%s: %s", d.what, d.detail)
			}
			t.Logf("%d exported names of kafka-go's %s compared", len(tp.Scope().Names()), name)
		})
	}
}

func join(mod, sub string) string {
	if sub == "" {
		return mod
	}
	return mod + "/" + sub
}

type difference struct{ what, detail string }

// qualifier prints both libraries' packages the same way, so that types
// compare by name.
func qualifier(p *types.Package) string {
	path := p.Path()
	for _, root := range []string{theirs, ours} {
		if path == root {
			return "kafka"
		}
		if strings.HasPrefix(path, root+"/") {
			return "kafka/" + strings.TrimPrefix(path, root+"/")
		}
	}
	return path
}

// typeString prints t with both libraries' packages named alike and
// without parameter names (they are not part of a function's type).
func typeString(t types.Type) string {
	s := types.TypeString(unnamed(t), qualifier)
	for from, to := range aliasNames {
		s = strings.ReplaceAll(s, from, to)
	}
	return s
}

// aliasNames maps the types kafka-go's root package re-exports by alias
// (its Header is its protocol package's Header) to their root names, so
// that a field declared with either spelling compares alike.
var aliasNames = map[string]string{}

func learnAliases(p *types.Package) {
	for _, name := range p.Scope().Names() {
		tn, ok := p.Scope().Lookup(name).(*types.TypeName)
		if !ok || !tn.IsAlias() || !tn.Exported() {
			continue
		}
		if named, ok := types.Unalias(tn.Type()).(*types.Named); ok && named.Obj().Pkg() != p {
			aliasNames[types.TypeString(named, qualifier)] = "kafka." + name
		}
	}
}

// unnamed rebuilds a function type with its parameters' names left out.
func unnamed(t types.Type) types.Type {
	sig, ok := t.(*types.Signature)
	if !ok {
		return t
	}
	strip := func(tuple *types.Tuple) *types.Tuple {
		vars := make([]*types.Var, tuple.Len())
		for i := range vars {
			vars[i] = types.NewParam(token.NoPos, nil, "", unnamed(tuple.At(i).Type()))
		}
		return types.NewTuple(vars...)
	}
	return types.NewSignatureType(nil, nil, nil, strip(sig.Params()), strip(sig.Results()), sig.Variadic())
}

func compare(theirPkg, ourPkg *types.Package) []difference {
	var diffs []difference
	add := func(what, format string, args ...string) {
		detail := format
		for _, a := range args {
			detail = strings.Replace(detail, "%s", a, 1)
		}
		diffs = append(diffs, difference{what, detail})
	}
	for _, name := range theirPkg.Scope().Names() {
		theirObj := theirPkg.Scope().Lookup(name)
		if !theirObj.Exported() {
			continue
		}
		ourObj := ourPkg.Scope().Lookup(name)
		kind := objKind(theirObj)
		what := kind + " " + name
		if ourObj == nil {
			add(what, "missing")
			continue
		}
		if k := objKind(ourObj); k != kind {
			add(what, "is a %s here", k)
			continue
		}
		switch o := theirObj.(type) {
		case *types.Const:
			oc := ourObj.(*types.Const)
			if typeString(o.Type()) != typeString(oc.Type()) {
				add(what, "type %s, want %s", typeString(oc.Type()), typeString(o.Type()))
			}
			if !constant.Compare(o.Val(), token.EQL, oc.Val()) {
				add(what, "value %s, want %s", oc.Val().String(), o.Val().String())
			}
		case *types.Var, *types.Func:
			if a, b := typeString(o.Type()), typeString(ourObj.Type()); a != b {
				add(what, "type %s, want %s", b, a)
			}
		case *types.TypeName:
			diffs = append(diffs, compareType(name, o, ourObj.(*types.TypeName))...)
		}
	}
	sort.Slice(diffs, func(i, j int) bool { return diffs[i].what < diffs[j].what })
	return diffs
}

func isInterface(t types.Type) bool {
	_, ok := t.(*types.Interface)
	return ok
}

func objKind(o types.Object) string {
	switch o.(type) {
	case *types.Const:
		return "const"
	case *types.Var:
		return "var"
	case *types.Func:
		return "func"
	case *types.TypeName:
		return "type"
	}
	return "object"
}

func compareType(name string, theirs, ours *types.TypeName) []difference {
	var diffs []difference
	what := "type " + name
	// An alias is compared as the type it stands for: kafka-go's Record is
	// its protocol package's Record, whose fields a program uses.
	theirType, ourType := types.Unalias(theirs.Type()), types.Unalias(ours.Type())
	if tn, ok := theirType.(*types.Named); ok {
		theirs = tn.Obj()
	}
	if on, ok := ourType.(*types.Named); ok {
		ours = on.Obj()
	}
	tu, ou := theirType.Underlying(), ourType.Underlying()
	switch tt := tu.(type) {
	case *types.Struct:
		os, ok := ou.(*types.Struct)
		if !ok {
			return append(diffs, difference{what, "is not a struct"})
		}
		ourFields := map[string]*types.Var{}
		for i := 0; i < os.NumFields(); i++ {
			ourFields[os.Field(i).Name()] = os.Field(i)
		}
		for i := 0; i < tt.NumFields(); i++ {
			f := tt.Field(i)
			if !f.Exported() {
				continue
			}
			fw := "field " + name + "." + f.Name()
			of, ok := ourFields[f.Name()]
			if !ok {
				diffs = append(diffs, difference{fw, "missing"})
				continue
			}
			if a, b := typeString(f.Type()), typeString(of.Type()); a != b {
				diffs = append(diffs, difference{fw, "type " + b + ", want " + a})
			}
		}
	case *types.Interface:
		oi, ok := ou.(*types.Interface)
		if !ok {
			return append(diffs, difference{what, "is not an interface"})
		}
		for i := 0; i < tt.NumMethods(); i++ {
			m := tt.Method(i)
			mw := "method " + name + "." + m.Name()
			obj, _, _ := types.LookupFieldOrMethod(oi, false, m.Pkg(), m.Name())
			om, ok := obj.(*types.Func)
			if !ok {
				diffs = append(diffs, difference{mw, "missing"})
				continue
			}
			if a, b := typeString(m.Type()), typeString(om.Type()); a != b {
				diffs = append(diffs, difference{mw, "signature " + b + ", want " + a})
			}
		}
		return diffs
	default:
		if a, b := typeString(tu), typeString(ou); a != b {
			diffs = append(diffs, difference{what, "underlying type " + b + ", want " + a})
		}
	}
	// The methods of T and *T.
	theirSet := types.NewMethodSet(types.NewPointer(theirType))
	ourSet := types.NewMethodSet(types.NewPointer(ourType))
	for i := 0; i < theirSet.Len(); i++ {
		m := theirSet.At(i).Obj().(*types.Func)
		if !m.Exported() {
			continue
		}
		recv := name
		if _, ptr := m.Type().(*types.Signature).Recv().Type().(*types.Pointer); ptr && !isInterface(tu) {
			recv = "(*" + name + ")"
		}
		mw := "method " + recv + "." + m.Name()
		sel := ourSet.Lookup(ours.Pkg(), m.Name())
		if sel == nil {
			diffs = append(diffs, difference{mw, "missing"})
			continue
		}
		if a, b := typeString(m.Type()), typeString(sel.Obj().Type()); a != b {
			diffs = append(diffs, difference{mw, "signature " + b + ", want " + a})
		}
	}
	return diffs
}
