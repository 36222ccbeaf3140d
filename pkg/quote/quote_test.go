package quote

import (
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	long := strings.Repeat("a", 2<<20)
	tests := []struct {
		name                   string
		in                     string
		cell, line, text       string
		cellMaxLen, lineMaxLen int
	}{
		{name: "plain", in: "ScheduleAttemptFailure", cell: "ScheduleAttemptFailure", line: "ScheduleAttemptFailure", text: "ScheduleAttemptFailure"},
		{name: "UTF-8 passes unchanged", in: "名前 Größe ñ 🚀 \\x1b", cell: "名前 Größe ñ 🚀 \\x1b", line: "名前 Größe ñ 🚀 \\x1b", text: "名前 Größe ñ 🚀 \\x1b"},
		{name: "CSI: clear screen, colour", in: "a\x1b[2J\x1b[31mred", cell: `a\x1b[2J\x1b[31mred`, line: `a\x1b[2J\x1b[31mred`, text: `a\x1b[2J\x1b[31mred`},
		{name: "carriage return and backspace", in: "ok\rfake\bX", cell: `ok\rfake\bX`, line: `ok\rfake\bX`, text: `ok\rfake\bX`},
		{name: "OSC 8 hyperlink", in: "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\", cell: `\x1b]8;;https://evil.example\x1b\click\x1b]8;;\x1b\`, line: `\x1b]8;;https://evil.example\x1b\click\x1b]8;;\x1b\`, text: `\x1b]8;;https://evil.example\x1b\click\x1b]8;;\x1b\`},
		{name: "OSC title with BEL", in: "\x1b]0;pwned\a", cell: `\x1b]0;pwned\a`, line: `\x1b]0;pwned\a`, text: `\x1b]0;pwned\a`},
		{name: "bidi override", in: "user\u202Egnp.exe", cell: `user\u202egnp.exe`, line: `user\u202egnp.exe`, text: `user\u202egnp.exe`},
		{name: "bidi isolate and mark", in: "a\u2066b\u200fc", cell: `a\u2066b\u200fc`, line: `a\u2066b\u200fc`, text: `a\u2066b\u200fc`},
		{name: "C1 CSI", in: "a\u009b2Jb", cell: `a\u009b2Jb`, line: `a\u009b2Jb`, text: `a\u009b2Jb`},
		{name: "invalid UTF-8", in: "a\xffb", cell: `a\xffb`, line: `a\xffb`, text: `a\xffb`},
		{name: "DEL and NUL", in: "a\x7fb\x00", cell: `a\x7fb\x00`, line: `a\x7fb\x00`, text: `a\x7fb\x00`},
		{name: "newline and tab: cells and lines escape, text keeps", in: "a\tb\nc", cell: `a\tb\nc`, line: `a\tb\nc`, text: "a\tb\nc"},
		{name: "line separator", in: "a\u2028b", cell: `a\u2028b`, line: `a\u2028b`, text: `a\u2028b`},
		{name: "very long", in: long, cellMaxLen: CellMax + 40, lineMaxLen: LineMax + 40},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cell, line, text := Cell(tc.in), Line(tc.in), Text(tc.in)
			if tc.cellMaxLen > 0 {
				for _, got := range []struct {
					name, s string
					max     int
				}{{"Cell", cell, tc.cellMaxLen}, {"Line", line, tc.lineMaxLen}, {"Text", text, tc.lineMaxLen}} {
					if len(got.s) > got.max || !strings.Contains(got.s, "more bytes)") {
						t.Errorf("%s: %d bytes ending %q, want at most %d with a marker", got.name, len(got.s), got.s[len(got.s)-30:], got.max)
					}
				}
				if !strings.HasSuffix(cell, "…(2096896 more bytes)") {
					t.Errorf("Cell ends %q, want the bytes left out counted", cell[len(cell)-30:])
				}
				return
			}
			if cell != tc.cell {
				t.Errorf("Cell(%q) = %q, want %q", tc.in, cell, tc.cell)
			}
			if line != tc.line {
				t.Errorf("Line(%q) = %q, want %q", tc.in, line, tc.line)
			}
			if text != tc.text {
				t.Errorf("Text(%q) = %q, want %q", tc.in, text, tc.text)
			}
			for _, got := range []string{cell, line, text} {
				if strings.ContainsAny(got, "\x1b\r\b\a\x7f\u202e\u2066\u200f\u009b\u2028") {
					t.Errorf("%q still holds a control character", got)
				}
			}
		})
	}
}

// TestText_linesCut: each line of a text is cut on its own, and the
// newlines between them stay.
func TestText_linesCut(t *testing.T) {
	got := Text("error: x\n" + strings.Repeat("b", 3*LineMax) + "\nremedy")
	lines := strings.Split(got, "\n")
	if len(lines) != 3 || lines[0] != "error: x" || lines[2] != "remedy" || len(lines[1]) > LineMax+30 {
		t.Errorf("Text = %q…", got[:60])
	}
}

// TestCut_atRuneStart: a cut never splits a character.
func TestCut_atRuneStart(t *testing.T) {
	got := Cell(strings.Repeat("é", CellMax))
	prefix, _, _ := strings.Cut(got, "…")
	if !strings.HasPrefix(got, strings.Repeat("é", len(prefix)/2)) || len(prefix)%2 != 0 {
		t.Errorf("Cell cut inside a character: %q", got[len(got)-40:])
	}
}
