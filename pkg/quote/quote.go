// Package quote makes text that came from outside the plugin safe to print
// for a person: metric label values, event and FitError messages, node and
// target names, annotations, file contents in errors. A terminal obeys
// what it is sent, so a value must not move the cursor, clear the screen,
// set the window title, draw a hyperlink (OSC 8) or reorder the line (bidi
// overrides); and one enormous value must not flood the screen.
//
// Control characters (C0, DEL, C1), the bidi and line-separator format
// characters and invalid UTF-8 are written as Go escapes (\x1b, \r, \u202e,
// \xff), visibly; any other text, every script and emoji included, passes
// unchanged. A value longer than its limit is cut, with a marker that says
// how much was left out. Only human-readable output is quoted: -o json and
// yaml keep values exact (JSON escapes them by itself).
package quote

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits, in bytes of the text as printed.
const (
	// CellMax bounds a table cell or a name: a label value, a namespace.
	CellMax = 256
	// LineMax bounds a line of prose: a summary, a reason, a warning, a
	// line of an error.
	LineMax = 2048
)

// Cell quotes s for one table cell: tabs and newlines are escaped too, so
// the columns hold, and at most CellMax bytes are printed.
func Cell(s string) string { return quote(s, CellMax, false) }

// Line quotes s for one line of prose (a warning, a summary): tabs and
// newlines are escaped, and at most LineMax bytes are printed.
func Line(s string) string { return quote(s, LineMax, false) }

// Text quotes s for text of several lines (an error with its remedy):
// newlines and tabs stay, and each line is cut at LineMax bytes.
func Text(s string) string {
	if safe(s, true) && len(s) <= LineMax {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = quote(l, LineMax, true)
	}
	return strings.Join(lines, "\n")
}

func marker(rest int) string { return fmt.Sprintf("…(%d more bytes)", rest) }

// quote escapes s and cuts it at max bytes of output; keepTabs keeps tabs
// (the newlines of Text are split off before).
func quote(s string, max int, keepTabs bool) string {
	if safe(s, keepTabs) && len(s) <= max {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var out string
		switch {
		case r == utf8.RuneError && size == 1:
			out = fmt.Sprintf(`\x%02x`, s[i])
		case r == '\t' && keepTabs:
			out = "\t"
		case needsEscape(r):
			out = escape(r)
		default:
			out = s[i : i+size]
		}
		if b.Len()+len(out) > max {
			b.WriteString(marker(len(s) - i))
			break
		}
		b.WriteString(out)
		i += size
	}
	return b.String()
}

// safe says s prints as it is.
func safe(s string, keepTabs bool) bool {
	for _, r := range s {
		if r == utf8.RuneError || (needsEscape(r) && !(keepTabs && r == '\t')) {
			return false
		}
	}
	return true
}

// needsEscape: the C0 controls and DEL (ESC starts every terminal sequence;
// \r, \b and \f rewrite what is shown), the C1 controls (0x9b is CSI to
// some terminals), and the format characters that reorder or break a line:
// the bidi marks, embeddings, overrides and isolates, and the line and
// paragraph separators.
func needsEscape(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

func escape(r rune) string {
	switch r {
	case '\a':
		return `\a`
	case '\b':
		return `\b`
	case '\f':
		return `\f`
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	case '\v':
		return `\v`
	}
	if r < 0x80 {
		return fmt.Sprintf(`\x%02x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}
