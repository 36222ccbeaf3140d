package workload

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestExcerpt_templateErrors: whatever a template file holds, an error
// about it shows at most a short excerpt, escaped; never the whole object.
func TestExcerpt_templateErrors(t *testing.T) {
	long := strings.Repeat("A", 10000)
	for _, tc := range []struct {
		name, content string
		// notShown must not appear; want must.
		notShown, want string
	}{
		{"an object without kind", "password: hunter2-TOPSECRET\n", "hunter2", "no kind"},
		{"a long token", "x: {{ " + long + " }}\n", long[:maxExcerpt], "…"},
		{"a long YAML line", "x: [" + long + "\n", long[:maxExcerpt], ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			tmpl, perr := ParseTemplate("t.yaml", []byte(tc.content))
			if perr != nil {
				err = perr
			} else {
				_, err = tmpl.unstructured(templateData(nil, 0, 1))
			}
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if strings.Contains(msg, tc.notShown) {
				t.Errorf("the error shows %q: %s", excerpt(tc.notShown, 40), excerpt(msg, 300))
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("the error lacks %q: %s", tc.want, msg)
			}
			if n := utf8.RuneCountInString(msg); n > maxExcerpt+80 {
				t.Errorf("the error is %d runes long", n)
			}
		})
	}
}

func TestExcerpt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"plain", 10, "plain"},
		{"a \x1b[2J clear", 20, `a \x1b[2J clear`},
		{"line\nbreak\ttab", 20, `line\nbreak\ttab`},
		{"bad \xff byte", 20, `bad \xff byte`},
		{"zero\u200bwidth", 20, `zero\u200bwidth`},
		{"héllo wörld", 5, "héllo…"},
		{"", 5, ""},
	} {
		if got := excerpt(tc.in, tc.n); got != tc.want {
			t.Errorf("excerpt(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
