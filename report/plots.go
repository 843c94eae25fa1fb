package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// figure is one rendered plot with the words the HTML page shows around it.
type figure struct {
	name    string // file name, e.g. throughput.png
	title   string
	caption string // one line on how to read it
	png     []byte
}

// dpi and plotWidth fix the pixel size: 8 in at 150 dpi is 1200 px, sharp
// when the page scales it to its column width.
const (
	dpi       = 150
	plotWidth = 8 * vg.Inch
)

// palette is Okabe and Ito's colour-blind-safe set of eight (black
// last: it reads as a reference line). A paradigm keeps its colour (by its
// position in the list) in every plot.
var palette = []color.RGBA{
	{0x00, 0x72, 0xb2, 0xff}, // blue
	{0xd5, 0x5e, 0x00, 0xff}, // vermillion
	{0x00, 0x9e, 0x73, 0xff}, // bluish green
	{0xcc, 0x79, 0xa7, 0xff}, // reddish purple
	{0xe6, 0x9f, 0x00, 0xff}, // orange
	{0x56, 0xb4, 0xe9, 0xff}, // sky blue
	{0xc9, 0xb2, 0x00, 0xff}, // yellow, darkened to show on white
	{0x00, 0x00, 0x00, 0xff}, // black
}

// dashes give every line a second cue besides its hue, so that lines stay
// apart for readers who cannot tell some hues apart, in grey print, and
// past eight paradigms (where colours repeat with another dash).
var dashes = [][]vg.Length{
	nil,
	{vg.Points(7), vg.Points(3)},
	{vg.Points(2), vg.Points(2)},
	{vg.Points(7), vg.Points(2), vg.Points(2), vg.Points(2)},
}

var glyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PlusGlyph{},
	draw.CrossGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{},
}

func runColor(i int) color.Color { return palette[i%len(palette)] }

func runLine(i int) draw.LineStyle {
	return draw.LineStyle{Color: runColor(i), Width: vg.Points(2), Dashes: dashes[(i+i/len(palette))%len(dashes)]}
}

func runGlyph(i int) draw.GlyphStyle {
	return draw.GlyphStyle{Color: runColor(i), Radius: vg.Points(3.5), Shape: glyphs[i%len(glyphs)]}
}

// newPlot returns a plot with the report's type sizes and a light grid.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Variant = "Sans"
	p.Title.TextStyle.Font.Size = vg.Points(14)
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.X.Tick.Marker = niceTicks{format: plainNumber}
	p.Y.Tick.Marker = niceTicks{format: plainNumber}
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(12)
		a.Label.TextStyle.Font.Variant = "Sans"
		a.Tick.Label.Font.Size = vg.Points(10.5)
		a.Tick.Label.Font.Variant = "Sans"
	}
	p.Legend.TextStyle.Font.Size = vg.Points(10.5)
	p.Legend.TextStyle.Font.Variant = "Sans"
	p.Legend.ThumbnailWidth = vg.Points(28)
	p.Legend.Padding = vg.Points(2)
	return p
}

func grid(vertical, horizontal bool) *plotter.Grid {
	g := plotter.NewGrid()
	light := draw.LineStyle{Color: color.Gray{0xdd}, Width: vg.Points(0.5)}
	g.Vertical, g.Horizontal = light, light
	if !vertical {
		g.Vertical.Width = 0
	}
	if !horizontal {
		g.Horizontal.Width = 0
	}
	return g
}

// renderPNG draws p at plotWidth × h. The gonum renderer is deterministic
// (fixed fonts, no timestamps in the PNG), which the byte-equality test
// relies on. A panic inside the plotting library becomes an error: the
// inputs were validated, so it would be a bug, but it must not take down a
// compare that has already spent minutes training.
func renderPNG(p *plot.Plot, h vg.Length) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("report: drawing %q: %v", p.Title.Text, r)
		}
	}()
	c := vgimg.NewWith(vgimg.UseWH(plotWidth, h), vgimg.UseDPI(dpi))
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("report: encoding %q: %w", p.Title.Text, err)
	}
	return buf.Bytes(), nil
}

// renderTiles draws a grid of plots (nil cells stay empty) at plotWidth
// × h, aligned so their axes line up.
func renderTiles(panels [][]*plot.Plot, h vg.Length, what string) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("report: drawing %s: %v", what, r)
		}
	}()
	c := vgimg.NewWith(vgimg.UseWH(plotWidth, h), vgimg.UseDPI(dpi))
	dc := draw.New(c)
	t := draw.Tiles{Rows: len(panels), Cols: len(panels[0]), PadX: vg.Points(6), PadY: vg.Points(6),
		PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	canvases := plot.Align(panels, t, dc)
	for r := range panels {
		for k, p := range panels[r] {
			if p != nil {
				p.Draw(canvases[r][k])
			}
		}
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("report: encoding %s: %w", what, err)
	}
	return buf.Bytes(), nil
}

// valueLabels writes texts at the end of horizontal bars (x = value,
// y = category), in the plots' type.
func valueLabels(xys plotter.XYs, texts []string) (*plotter.Labels, error) {
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: texts})
	if err != nil {
		return nil, fmt.Errorf("report: bar labels: %w", err)
	}
	for i := range l.TextStyle {
		l.TextStyle[i].Font.Size = vg.Points(9.5)
		l.TextStyle[i].Font.Variant = "Sans"
		l.TextStyle[i].YAlign = draw.YCenter
	}
	l.Offset = vg.Point{X: vg.Points(4)}
	return l, nil
}

// intTicks marks whole numbers only (staleness, worker counts), at a step
// that keeps about ten labels.
type intTicks struct{}

func (intTicks) Ticks(lo, hi float64) []plot.Tick {
	lo, hi = math.Ceil(lo), math.Floor(hi)
	if hi < lo {
		return nil
	}
	step := 1.0
	for (hi-lo)/step > 10 {
		switch {
		case step*2 >= (hi-lo)/10:
			step *= 2
		case step*5 >= (hi-lo)/10:
			step *= 5
		default:
			step *= 10
		}
	}
	var ts []plot.Tick
	// Adding 0 turns a −0 (from Ceil of a small negative) into 0, so the
	// first label does not read "-0".
	for v := math.Ceil(lo/step)*step + 0; v <= hi; v += step {
		ts = append(ts, plot.Tick{Value: v, Label: fmt.Sprintf("%.0f", v)})
	}
	return ts
}

// niceTicks labels about five to ten round values (steps of 1, 2, 2.5 or 5
// times a power of ten), more than gonum's default, so values can be read
// off a bar or a curve; unlabelled minor ticks sit halfway between.
type niceTicks struct{ format func(float64) string }

func (t niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || bad(lo) || bad(hi) {
		return nil
	}
	raw := (hi - lo) / 10
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ts []plot.Tick
	first := math.Ceil(lo/step-1e-9) * step
	for k := 0; ; k++ {
		v := first + float64(k)*step
		if v > hi+step*1e-9 {
			break
		}
		v = math.Round(v/step*1e6) / 1e6 * step // no 0.30000000000000004
		ts = append(ts, plot.Tick{Value: v + 0, Label: t.format(v + 0)})
		if mid := v + step/2; mid <= hi {
			ts = append(ts, plot.Tick{Value: mid})
		}
	}
	return ts
}

func plainNumber(v float64) string { return trimZero(fmt.Sprintf("%.4f", v)) }

// percentTicks labels a share axis (values in 0..1) with a % sign. With log
// set the axis holds log10 of the share: decades are labelled, their
// multiples get unlabelled minor ticks.
type percentTicks struct {
	scale float64
	log   bool
	upTo  float64 // when > 0, no ticks above it (a share axis stretched for a legend stops at 100%)
}

func (t percentTicks) Ticks(lo, hi float64) []plot.Tick {
	label := func(v float64) string { return trimZero(fmt.Sprintf("%.3g", v*t.scale)) + "%" }
	if !t.log {
		var ts []plot.Tick
		for _, tk := range (niceTicks{format: label}).Ticks(lo, hi) {
			if t.upTo == 0 || tk.Value <= t.upTo+1e-9 {
				ts = append(ts, tk)
			}
		}
		return ts
	}
	var ts []plot.Tick
	for e := math.Floor(lo); e <= math.Ceil(hi); e++ {
		for m := 1; m < 10; m++ {
			v := e + math.Log10(float64(m))
			if v < lo-1e-9 || v > hi+1e-9 {
				continue
			}
			tk := plot.Tick{Value: v}
			if m == 1 {
				tk.Label = label(math.Pow(10, e))
			}
			ts = append(ts, tk)
		}
	}
	return ts
}
