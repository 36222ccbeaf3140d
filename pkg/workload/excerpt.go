package workload

import (
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime"
)

// maxExcerpt is how much of a parser's message about a file an error shows,
// in runes: parsers quote the content they stumble on (a token, a key, the
// whole object), and the file may not be one the user meant to show.
const maxExcerpt = 160

// contentError is a parser's error about a file's content, shown as
// excerpt shows it.
type contentError struct{ err error }

func (e contentError) Error() string { return excerpt(e.err.Error(), maxExcerpt) }
func (e contentError) Unwrap() error { return e.err }

// fromContent wraps a parser's error about a file's content so that it
// quotes at most a short, escaped excerpt. apimachinery's "Object 'Kind' is
// missing in '<the whole object>'" becomes a sentence of its own.
func fromContent(err error) error {
	switch {
	case err == nil:
		return nil
	case runtime.IsMissingKind(err):
		return errors.New("no kind: want an object with apiVersion and kind")
	case runtime.IsMissingVersion(err):
		return errors.New("no apiVersion: want an object with apiVersion and kind")
	}
	var ce contentError
	if errors.As(err, &ce) {
		return err
	}
	return contentError{err}
}

// excerpt is s with control characters, invalid UTF-8 and other
// unprintable runes escaped as Go would, cut to n runes with "…".
func excerpt(s string, n int) string {
	var b strings.Builder
	for count := 0; s != ""; count++ {
		if count == n {
			b.WriteString("…")
			break
		}
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[0]), 16))
		case unicode.IsPrint(r):
			b.WriteRune(r)
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		s = s[size:]
	}
	return b.String()
}
