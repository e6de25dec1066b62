package phpserial_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/jobgen/jobgen/internal/phptest"
	"github.com/jobgen/jobgen/laravel/phpserial"
)

// genValue draws PHP values that serialize() writes canonically: string
// keys that PHP would not turn into integers, distinct keys and
// property names, class names PHP accepts, and back-references only to
// values already complete: r: to objects, R: to values that are
// neither objects nor r: (PHP writes a second use of a reference to an
// object as R:, and an R: to an r: as R: to the object, so those have
// another canonical form).
type gen struct {
	t      *rapid.T
	slots  int
	done   []int // slots of complete values that R: may name
	objs   []int // slots of complete objects
	budget int
}

func (g *gen) value(depth int) any {
	g.budget--
	kinds := 7
	if depth > 3 || g.budget < 0 {
		kinds = 5
	}
	k := rapid.IntRange(0, kinds+1).Draw(g.t, "kind")
	if k == kinds && len(g.objs) > 0 {
		n := rapid.SampledFrom(g.objs).Draw(g.t, "r")
		g.slots++
		return phpserial.Ref(n)
	}
	if k == kinds+1 && len(g.done) > 0 {
		return phpserial.RefVar(rapid.SampledFrom(g.done).Draw(g.t, "R"))
	}
	g.slots++
	slot := g.slots
	var v any
	switch k % kinds {
	case 0:
		v = nil
	case 1:
		v = rapid.Bool().Draw(g.t, "b")
	case 2:
		v = rapid.Int64().Draw(g.t, "i")
	case 3:
		v = rapid.OneOf(rapid.Float64(), rapid.SampledFrom([]float64{math.Inf(1), math.Inf(-1), math.NaN(), math.Copysign(0, -1), 1e25, 5e-324, 0.1})).Draw(g.t, "d")
	case 4:
		v = rapid.String().Draw(g.t, "s")
	case 5:
		a := &phpserial.Array{Entries: []phpserial.Entry{}}
		seen := map[any]bool{}
		for range rapid.IntRange(0, 4).Draw(g.t, "len") {
			var key any = rapid.Int64().Draw(g.t, "ik")
			if rapid.Bool().Draw(g.t, "skey") {
				key = "k" + rapid.StringMatching(`[a-z0-9_\x00]{0,6}`).Draw(g.t, "sk")
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			a.Entries = append(a.Entries, phpserial.Entry{Key: key, Value: g.value(depth + 1)})
		}
		v = a
	case 6:
		o := &phpserial.Object{Class: rapid.SampledFrom([]string{"stdClass", `App\Jobs\SendWelcomeEmail`, "Foo_Bar2"}).Draw(g.t, "class"), Props: []phpserial.Prop{}}
		seen := map[string]bool{}
		for range rapid.IntRange(0, 4).Draw(g.t, "props") {
			p := phpserial.Prop{Name: rapid.StringMatching(`[a-z][a-zA-Z0-9_]{0,5}`).Draw(g.t, "name")}
			switch rapid.IntRange(0, 2).Draw(g.t, "vis") {
			case 1:
				p.Visibility = phpserial.Protected
			case 2:
				p.Visibility, p.Declarer = phpserial.Private, rapid.SampledFrom([]string{"Base", `App\Jobs\Parent`}).Draw(g.t, "decl")
			}
			if o.Class == "stdClass" { // a real class: PHP keeps only its declared kinds apart
				p.Visibility, p.Declarer = phpserial.Public, ""
			}
			if seen[p.Declarer+"\x00"+p.Name] || o.Class == "stdClass" && seen["\x00"+p.Name] {
				continue
			}
			seen[p.Declarer+"\x00"+p.Name] = true
			p.Value = g.value(depth + 1)
			o.Props = append(o.Props, p)
		}
		g.objs = append(g.objs, slot)
		return o
	}
	g.done = append(g.done, slot)
	return v
}

// Go encodes, PHP unserializes and serializes again, and the bytes must
// be the same, which also makes Go's decoding of PHP's output equal.
func TestDifferentialPHP(t *testing.T) {
	t.Parallel()
	php := phptest.Bin(t)
	var inputs [][]byte
	rapid.Check(t, func(rt *rapid.T) {
		for range 20 { // one PHP process checks them all: draw many
			g := &gen{t: rt, budget: 30}
			b, err := phpserial.Marshal(g.value(0))
			if err != nil {
				rt.Fatalf("marshal: %v", err)
			}
			inputs = append(inputs, b)
		}
	})
	var stdin bytes.Buffer
	for _, in := range inputs {
		fmt.Fprintln(&stdin, base64.StdEncoding.EncodeToString(in))
	}
	out := phptest.Run(t, context.Background(), php, "testdata/roundtrip.php", stdin.Bytes())
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(inputs) {
		t.Fatalf("php answered %d lines for %d values", len(lines), len(inputs))
	}
	for i, line := range lines {
		got, err := base64.StdEncoding.DecodeString(line)
		if err != nil {
			t.Fatalf("value %d: PHP refused %q (%s)", i, inputs[i], line)
		}
		if !bytes.Equal(got, inputs[i]) {
			t.Errorf("value %d: Go wrote\n%q\nPHP wrote back\n%q", i, inputs[i], got)
			continue
		}
		v, err := phpserial.Unmarshal(got)
		if err != nil {
			t.Errorf("value %d: PHP's %q does not decode: %v", i, got, err)
			continue
		}
		again, _ := phpserial.Marshal(v)
		if !bytes.Equal(again, got) {
			t.Errorf("value %d: decoded and encoded again: %q", i, again)
		}
	}
}
