package main

import (
	"fmt"
	"math"
	"slices"
)

// spread is the median of some figures and their range.
type spread struct {
	med, lo, hi float64
	n           int
}

func spreadOf(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return spread{med, s[0], s[n-1], n}
}

// String is the median, with the range in brackets when there are
// several figures: "12.7 (10.5–20.0)".
func (s spread) String() string {
	if s.n == 0 {
		return "–"
	}
	if s.n == 1 || s.lo == s.hi {
		return num(s.med)
	}
	return fmt.Sprintf("%s (%s–%s)", num(s.med), num(s.lo), num(s.hi))
}

// geoSpread is the geometric mean of positive figures and their range.
func geoSpread(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	sum := 0.0
	for _, x := range xs {
		sum += math.Log(x)
	}
	return spread{math.Exp(sum / float64(len(xs))), slices.Min(xs), slices.Max(xs), len(xs)}
}

// num writes a figure to three significant digits, or whole from 100,
// without an exponent: 0.0826, 1.23, 12.3, 123, 2605.
func num(x float64) string {
	switch a := math.Abs(x); {
	case a >= 99.95:
		return fmt.Sprintf("%.0f", x)
	case a >= 9.995:
		return fmt.Sprintf("%.1f", x)
	case a >= 0.9995 || a == 0:
		return fmt.Sprintf("%.2f", x)
	default:
		digits := 2 - int(math.Floor(math.Log10(a)))
		return fmt.Sprintf("%.*f", digits, x)
	}
}

// field collects one figure of each sample.
func field(ss []sample, f func(sample) float64) []float64 {
	xs := make([]float64, 0, len(ss))
	for _, s := range ss {
		xs = append(xs, f(s))
	}
	return xs
}
