package trace_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace"
)

// readBoth reads data with the fast reader and with encoding/json alone, and
// fails t unless both give the same trace, or the same error.
func readBoth(t *testing.T, data []byte) *trace.Trace {
	t.Helper()
	fast, ferr := trace.Read(bytes.NewReader(data))
	ref, rerr := trace.ReadJSON(bytes.NewReader(data))
	if (ferr == nil) != (rerr == nil) || ferr != nil && ferr.Error() != rerr.Error() {
		t.Fatalf("fast reader: %v; encoding/json: %v", ferr, rerr)
	}
	if !reflect.DeepEqual(fast, ref) {
		t.Fatalf("the fast reader decodes otherwise than encoding/json:\nfast %+v\njson %+v", fast, ref)
	}
	return fast
}

// fastReaderCases are lines the fast reader takes, and lines it must leave
// to encoding/json, valid or not.
var fastReaderCases = []string{
	`{"at":7,"op":"add","pod":"ns/a","priority":-3}`, `{"at":7,"op":"done","pod":"ns/a"}`, `{"at":7,"op":"add","priority":3,"pod":"ns/a"}`,
	`{"at":0,"op":"add","pod":"ns/a","priority":-3,"gates":["g1","g2"]}`,
	`{ "at" : 1 , "op" : "fail" , "pod" : "ns/a" , "plugins" : [ "A" , "B" ] , "pending" : [ "B" ] }`,
	`{"at":2,"op":"event","event":"NodeAdd","queue":[]}`,
	`{"at":2,"op":"activate","pods":["ns/a","ns/a","x/y.z"]}`,
	`{"at":3,"op":"pop"}`, `{"at":3,"op":"snapshot"}`, `{"op":"done","at":3,"pod":"ns/a"}`,
	`{"at":-0,"op":"pop"}`, `{"at":0.0,"op":"pop"}`, `{"at":1e2,"op":"pop"}`, `{"at":01,"op":"pop"}`,
	`{"at":-1,"op":"pop"}`, `{"at":1234567890123456789,"op":"pop"}`, `{"at":99999999999999999999,"op":"pop"}`,
	`{"at":"1","op":"pop"}`, `{"at":null,"op":"pop"}`, `{"op":"pop"}`, `{"at":1}`, `{}`, `{"at":1,"op":"pop",}`,
	`{"at":1,"op":"pop"}}`, `{"at":1,"op":"pop"}]`, `{"at":1,"op":"pop"} {}`, `{"at":1,"op":"pop"}x`, `[1]`, `{"at":1,"op":"pop"`,
	`{"at":1,"op":"pop","at":2}`, `{"at":1,"op":"p\u006fp"}`, `{"a\u0074":1,"op":"pop"}`, `{"at":1,"op":"pop","x":1}`,
	`{"at":1,"op":"add","pod":"ns/a","priority":2147483648}`, `{"at":1,"op":"add","pod":"ns/a","priority":-2147483648}`,
	`{"at":1,"op":"add","pod":"ns/a","gates":[""]}`, `{"at":1,"op":"add","pod":"ns/a","gates":null}`,
	`{"at":1,"op":"add","pod":"ns/a","gates":["a",null]}`, `{"at":1,"op":"add","pod":"NS/a"}`, `{"at":1,"op":"add","pod":"ns/a/b"}`,
	`{"at":1,"op":"add","pod":"ns/-a"}`, `{"at":1,"op":"add","pod":"ns/a..b"}`, `{"at":1,"op":"add","pod":"ns/a.b-c"}`,
	`{"at":1,"op":"add","pod":"` + strings.Repeat("n", 64) + `/a"}`, `{"at":1,"op":"add","pod":"ns/` + strings.Repeat("a", 254) + `"}`,
	`{"at":1,"op":"add","pod":"ns/a","pod":"ns/b"}`, `{"at":1,"op":"add","pod":"ns/\u00e9"}`, `{"at":1,"op":"add","pod":"ns/é"}`,
	`{"at":1,"op":"fail","pod":"ns/a","plugins":["SchedulingGates"]}`, `{"at":1,"op":"fail","pod":"ns/a","plugins":["A"],"pending":["B"]}`,
	`{"at":1,"op":"fail","pod":"ns/a","plugins":[""]}`, `{"at":1,"op":"fail","pod":"ns/a"}`, `{"at":1,"op":"event","event":"Nope","queue":[]}`,
	`{"at":1,"op":"event","event":"NodeAdd"}`, `{"at":1,"op":"pop","pod":"ns/a"}`, `{"at":1,"op":"bogus"}`, `{"at":1,"op":"add","pod":5}`,
	`{"at":1,"op":"activate","pods":["ns/a","bad"]}`, `{"at":1,"op":"activate","pods":["ns/a",]}`, `{"at":1,"op":"add","pod":"ns/a","priority":1.5}`,
	"{\"at\":1,\t\"op\":\"pop\"}", `{"at":1,"op":"pop" }`, `{"at":1,"op":"add","pod":"ns/a","priority":}`, `{"at":1,"op":"add","pod":"ns/a","priority":3,"pod":"ns/b"}`,
	`{"at":1,"op":"add","pod":"ns/a",}`, `{"at":1,"op":"add","pod":"ns/a"`, `{"at":1,"op":"add","pod":"ns/a"]`, `{"at":1,"op":"add","pod":ns/a}`, `{"at":1,"op":pop}`, `{"at":1,"op":"pop"}` + "\u00a0", `{"schedqTrace":1}`, `{"schedqTrace":1,"config":{"popFromBackoffQ":false}}`,
}

func TestRead_FastMatchesJSON(t *testing.T) {
	for _, c := range fastReaderCases {
		for _, data := range []string{c, `{"schedqTrace":1}` + "\n" + c, `{"at":0,"op":"add","pod":"ns/a"}` + "\n" + c + "\n" + c} {
			t.Run(data, func(t *testing.T) { readBoth(t, []byte(data)) })
		}
	}
	// The lines the fast reader is for are read by it, not handed on.
	for _, c := range fastReaderCases[:11] {
		if !trace.ReadsFast(c) {
			t.Errorf("the fast reader handed %s on", c)
		}
	}
}

// FuzzRead_FastMatchesJSON: on any input the fast reader gives the trace, or
// the error, that decoding every line with encoding/json gives.
func FuzzRead_FastMatchesJSON(f *testing.F) {
	addExampleTraces(f)
	for _, c := range fastReaderCases {
		f.Add([]byte(`{"at":0,"op":"add","pod":"ns/a","gates":["g"]}` + "\n" + c))
	}
	f.Fuzz(func(t *testing.T, data []byte) { readBoth(t, data) })
}
