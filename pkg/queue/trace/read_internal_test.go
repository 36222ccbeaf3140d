package trace

import "testing"

// TestLineReader_canonical: the lines of the writer's shape are read by
// canonical, with what parse's field-by-field reading gives for them;
// every other line is left to that reading.
func TestLineReader_canonical(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{`{"at":41,"op":"pop"}`, true},
		{`{"at":408,"op":"done","pod":"default/p0"}`, true},
		{`{"at":128,"op":"add","pod":"default/p0","priority":-100}`, true},
		{`{"at":128,"op":"add","priority":100,"pod":"default/p0"}`, false},
		{`{"op":"pop","at":41}`, false},
		{`{"at":41, "op":"pop"}`, false},
		{`{"at":41,"op":"pop","x":1}`, false},
		{`{"at":1,"op":"fail","pod":"ns/a","plugins":["A"]}`, false},
		{`{"at":1,"op":"add","pod":"ns/a","priority":3}}`, false},
		{`{"at":01,"op":"pop"}`, false},
		{`{"at":1,"op":"p\u006fp"}`, false},
	} {
		t.Run(tc.line, func(t *testing.T) {
			var fast, slow lineReader
			fast.b = []byte(tc.line)
			if got := fast.canonical(); got != tc.want {
				t.Fatalf("canonical() = %v, want %v", got, tc.want)
			}
			if !tc.want {
				return
			}
			// The field-by-field reading of the same line, canonical skipped.
			slow.b = []byte(tc.line)
			if !slow.fields() {
				t.Fatal("the field-by-field reading rejects a line canonical takes")
			}
			if fast.has != slow.has || fast.ints != slow.ints || fast.vals != slow.vals {
				t.Errorf("canonical read has %b ints %v vals %v; field by field %b %v %v", fast.has, fast.ints, fast.vals, slow.has, slow.ints, slow.vals)
			}
		})
	}
}
