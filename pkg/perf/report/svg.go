package report

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"
)

// Line is one series of a chart.
type Line struct {
	Name   string
	Color  string
	Dashed bool
	// Step draws a staircase: the value holds until the next point.
	Step bool
	// StepBefore draws a staircase the other way: each value holds over
	// the interval that ends at its point (a rate measured over it).
	StepBefore bool
	X, Y       []float64
}

// Band shades an x range (a measurement window).
type Band struct {
	From, To float64
	Label    string
}

// Chart is a line chart drawn as inline SVG: no script, no external file.
type Chart struct {
	Title          string
	XLabel, YLabel string
	Lines          []Line
	Bands          []Band
	// YMax, when > 0, fixes the top of the y axis (to compare two charts).
	YMax float64
	// Width and Height in pixels; 0 picks 560×260.
	Width, Height int
}

const (
	marginLeft   = 58
	marginRight  = 12
	marginTop    = 40
	marginBottom = 42
)

// Palette is the series colours, in order.
var Palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"}

// SVG renders the chart.
func (c Chart) SVG() string {
	w, h := c.Width, c.Height
	if w == 0 {
		w = 560
	}
	if h == 0 {
		h = 260
	}
	xmin, xmax, ymax := math.Inf(1), math.Inf(-1), 0.0
	points := 0
	for _, l := range c.Lines {
		for i := range l.X {
			xmin = math.Min(xmin, l.X[i])
			xmax = math.Max(xmax, l.X[i])
			ymax = math.Max(ymax, l.Y[i])
			points++
		}
	}
	for _, b := range c.Bands {
		xmin = math.Min(xmin, b.From)
		xmax = math.Max(xmax, b.To)
	}
	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`, w, h, w, h)
	fmt.Fprintf(&s, `<text x="%d" y="16" font-size="13" font-weight="bold">%s</text>`, marginLeft, esc(c.Title))
	if points == 0 {
		fmt.Fprintf(&s, `<text x="%d" y="%d" fill="#888">no data</text></svg>`, w/2-25, h/2)
		return s.String()
	}
	if c.YMax > 0 {
		ymax = c.YMax
	}
	if xmin > 0 && xmin < (xmax-xmin)*0.2 {
		xmin = 0
	}
	if xmax == xmin {
		xmax = xmin + 1
	}
	yTicks := niceTicks(0, ymax, 5)
	ymax = math.Max(ymax, yTicks[len(yTicks)-1])
	if ymax == 0 {
		ymax = 1
	}
	pw, ph := float64(w-marginLeft-marginRight), float64(h-marginTop-marginBottom)
	px := func(x float64) float64 { return marginLeft + (x-xmin)/(xmax-xmin)*pw }
	py := func(y float64) float64 { return marginTop + ph - y/ymax*ph }

	for _, b := range c.Bands {
		x0, x1 := px(b.From), px(b.To)
		fmt.Fprintf(&s, `<rect x="%.1f" y="%d" width="%.1f" height="%.1f" fill="#f0e8c8"/>`, x0, marginTop, math.Max(x1-x0, 1), ph)
		fmt.Fprintf(&s, `<text x="%.1f" y="%d" fill="#8a7a3a" font-size="10">%s</text>`, x0+2, marginTop+10, esc(b.Label))
	}
	for _, t := range yTicks {
		y := py(t)
		fmt.Fprintf(&s, `<line x1="%d" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#e4e4e4"/>`, marginLeft, marginLeft+pw, y, y)
		fmt.Fprintf(&s, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`, marginLeft-4, y+4, tickLabel(t))
	}
	for _, t := range niceTicks(xmin, xmax, 6) {
		if t < xmin || t > xmax {
			continue
		}
		x := px(t)
		fmt.Fprintf(&s, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#999"/>`, x, x, marginTop+ph, marginTop+ph+4)
		fmt.Fprintf(&s, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, x, marginTop+ph+16, tickLabel(t))
	}
	fmt.Fprintf(&s, `<rect x="%d" y="%d" width="%.1f" height="%.1f" fill="none" stroke="#999"/>`, marginLeft, marginTop, pw, ph)
	fmt.Fprintf(&s, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`, marginLeft+pw/2, h-6, esc(c.XLabel))
	fmt.Fprintf(&s, `<text transform="translate(12 %.1f) rotate(-90)" text-anchor="middle">%s</text>`, marginTop+ph/2, esc(c.YLabel))

	legendX := marginLeft
	for i, l := range c.Lines {
		l = thin(l, px, int(pw))
		color := l.Color
		if color == "" {
			color = Palette[i%len(Palette)]
		}
		var pts []string
		for j := range l.X {
			switch {
			case l.Step && j > 0:
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(l.X[j]), py(l.Y[j-1])))
			case l.StepBefore && j > 0:
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(l.X[j-1]), py(l.Y[j])))
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(l.X[j]), py(l.Y[j])))
		}
		dash := ""
		if l.Dashed {
			dash = ` stroke-dasharray="5,3"`
		}
		fmt.Fprintf(&s, `<polyline fill="none" stroke="%s" stroke-width="1.6"%s points="%s"><title>%s</title></polyline>`, color, dash, strings.Join(pts, " "), esc(l.Name))
		// Legend: one row above the plot.
		ly := marginTop - 10
		fmt.Fprintf(&s, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"%s/>`, legendX, legendX+16, ly-4, ly-4, color, dash)
		fmt.Fprintf(&s, `<text x="%d" y="%d">%s</text>`, legendX+20, ly, esc(l.Name))
		legendX += 28 + 7*len(l.Name)
	}
	s.WriteString(`</svg>`)
	return s.String()
}

func esc(s string) string { return html.EscapeString(s) }

// thin keeps, of a line with many more points than the plot has pixel
// columns, the first, lowest, highest and last point of each column, in
// their order: the drawing is the same at that resolution, and a long run's
// series (a sample a second) or a results.json of millions of samples
// costs the page and the memory of a few thousand points.
func thin(l Line, px func(float64) float64, columns int) Line {
	if len(l.X) <= 4*max(columns, 1) {
		return l
	}
	out := l
	out.X, out.Y = nil, nil
	for start := 0; start < len(l.X); {
		col := math.Floor(px(l.X[start]))
		end, lo, hi := start, start, start
		for end+1 < len(l.X) && math.Floor(px(l.X[end+1])) == col {
			end++
			if l.Y[end] < l.Y[lo] {
				lo = end
			}
			if l.Y[end] > l.Y[hi] {
				hi = end
			}
		}
		keep := []int{start, lo, hi, end}
		slices.Sort(keep)
		for k, i := range keep {
			if k == 0 || i != keep[k-1] {
				out.X, out.Y = append(out.X, l.X[i]), append(out.Y, l.Y[i])
			}
		}
		start = end + 1
	}
	return out
}

// niceTicks returns about n round tick values covering [lo, hi].
// Values from a results.json may be anything: a span that is not a finite
// positive number gets one tick, and at most 2n+2 ticks are made, since
// far from zero a small step may not move a float64 at all.
func niceTicks(lo, hi float64, n int) []float64 {
	if span := hi - lo; !(span > 0) || math.IsInf(span, 0) {
		return []float64{lo}
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ticks []float64
	for t := math.Floor(lo/step) * step; t <= hi+step*1e-9 && len(ticks) <= 2*n+2; t += step {
		ticks = append(ticks, t)
	}
	if len(ticks) == 0 {
		return []float64{lo}
	}
	if ticks[len(ticks)-1] < hi {
		ticks = append(ticks, ticks[len(ticks)-1]+step)
	}
	return ticks
}

func tickLabel(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.Abs(v) >= 10000:
		return fmt.Sprintf("%.0fk", v/1000)
	case v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 1:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2g", v)
	}
}
