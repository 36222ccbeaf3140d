package workload

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime"
)

// Error locates a problem in a config file: the file, then the test case, the
// workload and the op, as far as they are known. Indexes are 0-based, like
// upstream's op index (the one in namespace-<opIndex>); an op index always
// refers to the test case's workloadTemplate, which is what the file shows.
//
//	workloads/x.yaml: test case "Foo", workload "bar", op 3 (createPods): countParam "$n" is not defined in params
type Error struct {
	// Path is the config file as given to Load or Parse.
	Path string
	// TestCase names the test case; TestCaseIndex is used when the name is
	// empty or not known. -1 when the error is not about a test case.
	TestCase      string
	TestCaseIndex int
	// Workload names the workload; WorkloadIndex is used when the name is
	// empty or not known. -1 when the error is not about a workload.
	Workload      string
	WorkloadIndex int
	// Op is the op's index in the workloadTemplate, -1 when the error is not
	// about an op. Opcode is empty when the op has none or it is unknown.
	Op     int
	Opcode Opcode
	// Err is what is wrong.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	sep := ": "
	part := func(s string) {
		b.WriteString(sep)
		b.WriteString(s)
		sep = ", "
	}
	switch {
	case e.TestCase != "":
		part(fmt.Sprintf("test case %q", e.TestCase))
	case e.TestCaseIndex >= 0:
		part(fmt.Sprintf("test case %d", e.TestCaseIndex))
	}
	switch {
	case e.Workload != "":
		part(fmt.Sprintf("workload %q", e.Workload))
	case e.WorkloadIndex >= 0:
		part(fmt.Sprintf("workload %d", e.WorkloadIndex))
	}
	if e.Op >= 0 {
		if e.Opcode != "" {
			part(fmt.Sprintf("op %d (%s)", e.Op, e.Opcode))
		} else {
			part(fmt.Sprintf("op %d", e.Op))
		}
	}
	b.WriteString(": ")
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// ErrNoMatch is returned by Select when nothing matches its arguments.
var ErrNoMatch = errors.New("nothing matches")

// errorf is fmt.Errorf; it exists so that the call sites read as messages.
func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// cleanDecodeError turns what sigs.k8s.io/yaml and encoding/json return into
// a message that talks about the file's keys rather than Go types.
func cleanDecodeError(err error) error {
	// sigs.k8s.io/yaml wraps as "error unmarshaling JSON: while decoding JSON: %w"
	// or "error converting YAML to JSON: %w".
	for {
		u := errors.Unwrap(err)
		if u == nil {
			break
		}
		if _, ok := err.(*json.UnmarshalTypeError); ok {
			break
		}
		err = u
	}
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		want := kindName(te.Type)
		hint := ""
		if te.Value == "bool" && want == "a string" {
			hint = ` (YAML reads unquoted y, n, yes, no, on, off, true and false as booleans: quote it)`
		}
		if te.Field == "" {
			return fmt.Errorf("got %s, want %s%s", te.Value, want, hint)
		}
		return fmt.Errorf("%s: got %s, want %s%s", fileKey(te.Field), te.Value, want, hint)
	}
	if runtime.IsMissingKind(err) || runtime.IsMissingVersion(err) {
		return fromContent(err)
	}
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "json: ")
	// yaml.v2 lists several problems on indented lines.
	msg = strings.ReplaceAll(msg, ":\n  ", ": ")
	msg = strings.ReplaceAll(msg, "\n  ", "; ")
	return fromContent(errors.New(msg))
}

// fileKey turns a Go field path ("NodeAllocatableStrategy.NodeAllocatable")
// into the lowerCamelCase keys the files use.
func fileKey(goPath string) string {
	parts := strings.Split(goPath, ".")
	for i, p := range parts {
		r, n := utf8.DecodeRuneInString(p)
		if n > 0 && unicode.IsUpper(r) {
			// Keep acronyms readable: "CSINode" stays, "Count" → "count".
			if len(p) > n {
				r2, _ := utf8.DecodeRuneInString(p[n:])
				if unicode.IsUpper(r2) {
					continue
				}
			}
			parts[i] = string(unicode.ToLower(r)) + p[n:]
		}
	}
	return strings.Join(parts, ".")
}

func kindName(t reflect.Type) string {
	if t == nil {
		return "something else"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return t.String()
}
