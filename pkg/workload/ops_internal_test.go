package workload

import (
	"fmt"
	"reflect"
	"testing"
)

// TestRawOps_registry checks the opcode list against itself: every opcode
// decodes into its own type, which says it is that opcode, and no type or
// opcode is listed twice.
func TestRawOps_registry(t *testing.T) {
	codes, types := map[Opcode]bool{}, map[reflect.Type]bool{}
	for _, r := range rawOps {
		if codes[r.code] {
			t.Errorf("opcode %s is listed twice", r.code)
		}
		codes[r.code] = true
		typ := reflect.TypeOf(r.new())
		if types[typ] {
			t.Errorf("%s: type %v is listed twice", r.code, typ)
		}
		types[typ] = true
		code, op, err := decodeOp([]byte(fmt.Sprintf(`{"opcode": %q}`, r.code)))
		if code != r.code {
			t.Errorf("%s: decodeOp read opcode %q", r.code, code)
		}
		if err == nil && reflect.TypeOf(op) != typ {
			t.Errorf("%s: decoded into %T, want %v", r.code, op, typ)
		}
		if f := reflect.ValueOf(r.new()).Elem().FieldByName("Opcode"); !f.IsValid() || f.Type() != reflect.TypeOf(Opcode("")) {
			t.Errorf("%s: %v has no Opcode field, which upstream's files set", r.code, typ)
		}
	}
	if len(codes) != 17 {
		t.Errorf("%d opcodes, want scheduler_perf v1.37.2's 17", len(codes))
	}
}
