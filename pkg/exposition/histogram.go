package exposition

import (
	"cmp"
	"slices"
)

// Bucket is one cumulative histogram bucket.
type Bucket struct {
	UpperBound float64 // the le label
	Count      float64 // cumulative count of observations <= UpperBound
}

// Histogram is one series of a histogram family: its labels without le, its
// buckets, sum and count.
type Histogram struct {
	Labels Labels
	// Buckets sorted by UpperBound; the last is +Inf in a well-formed series.
	Buckets []Bucket
	// Sum and Count come from _sum/_count (_gsum/_gcount for OpenMetrics
	// gauge histograms); valid if HasSum/HasCount.
	Sum, Count       float64
	HasSum, HasCount bool
	// Created is the OpenMetrics _created value (seconds); valid if HasCreated.
	Created    float64
	HasCreated bool
}

// Quantile is one quantile line of a summary.
type Quantile struct {
	Quantile float64 // the quantile label
	Value    float64
}

// Summary is one series of a summary family: its labels without quantile, its
// quantiles, sum and count.
type Summary struct {
	Labels Labels
	// Quantiles in exposition order.
	Quantiles        []Quantile
	Sum, Count       float64
	HasSum, HasCount bool
	// Created is the OpenMetrics _created value (seconds); valid if HasCreated.
	Created    float64
	HasCreated bool
}

// Histograms groups a histogram or gauge histogram family's samples into
// series by label set without le, in order of first appearance, even if the
// exposition interleaves series. It returns nil for other types. Samples
// whose le does not parse are skipped (Parse never yields them).
func (f *Family) Histograms() []Histogram {
	if f.Type != TypeHistogram && f.Type != TypeGaugeHistogram {
		return nil
	}
	g := groupSeries(f, "le")
	hs := make([]Histogram, len(g.labels))
	buckets := make([]Bucket, 0, g.special)
	for i := range hs {
		hs[i].Labels = g.labels[i]
		n := g.nSpecial[i]
		hs[i].Buckets = buckets[len(buckets) : len(buckets) : len(buckets)+int(n)]
		buckets = buckets[:len(buckets)+int(n)]
	}
	for i := range f.Samples {
		gi := g.of[i]
		if gi < 0 {
			continue
		}
		s, h := &f.Samples[i], &hs[gi]
		switch roleOf(s.Name, f.Name) {
		case roleBucket:
			if le, ok := parseFloat(s.Labels.Get("le")); ok {
				h.Buckets = append(h.Buckets, Bucket{UpperBound: le, Count: s.Value})
			}
		case roleSum, roleGSum:
			h.Sum, h.HasSum = s.Value, true
		case roleCount, roleGCount:
			h.Count, h.HasCount = s.Value, true
		case roleCreated:
			h.Created, h.HasCreated = s.Value, true
		}
	}
	for i := range hs {
		b := hs[i].Buckets
		if !slices.IsSortedFunc(b, cmpBucket) {
			slices.SortStableFunc(b, cmpBucket)
		}
	}
	return hs
}

func cmpBucket(a, b Bucket) int { return cmp.Compare(a.UpperBound, b.UpperBound) }

// Summaries groups a summary family's samples into series by label set
// without quantile, in order of first appearance. It returns nil for other
// types.
func (f *Family) Summaries() []Summary {
	if f.Type != TypeSummary {
		return nil
	}
	g := groupSeries(f, "quantile")
	ss := make([]Summary, len(g.labels))
	qs := make([]Quantile, 0, g.special)
	for i := range ss {
		ss[i].Labels = g.labels[i]
		n := int(g.nSpecial[i])
		ss[i].Quantiles = qs[len(qs) : len(qs) : len(qs)+n]
		qs = qs[:len(qs)+n]
	}
	for i := range f.Samples {
		gi := g.of[i]
		if gi < 0 {
			continue
		}
		s, sm := &f.Samples[i], &ss[gi]
		switch roleOf(s.Name, f.Name) {
		case roleValue:
			if q, ok := parseFloat(s.Labels.Get("quantile")); ok {
				sm.Quantiles = append(sm.Quantiles, Quantile{Quantile: q, Value: s.Value})
			}
		case roleSum:
			sm.Sum, sm.HasSum = s.Value, true
		case roleCount:
			sm.Count, sm.HasCount = s.Value, true
		case roleCreated:
			sm.Created, sm.HasCreated = s.Value, true
		}
	}
	return ss
}

// seriesGroups assigns each sample of a family to a series.
type seriesGroups struct {
	labels   []Labels // per series, without the special label
	nSpecial []int32  // per series, samples carrying the special label
	special  int      // total of nSpecial
	of       []int32  // per sample, its series or -1
}

// groupSeries groups f's samples by label set without special. Consecutive
// samples usually share a series, so the previous series is tried before the
// hash index.
func groupSeries(f *Family, special string) seriesGroups {
	g := seriesGroups{of: make([]int32, len(f.Samples))}
	var (
		index   map[uint64]int32
		backing []Label
		cur     = int32(-1)
	)
	for i := range f.Samples {
		s := &f.Samples[i]
		_, hasSpecial := s.Labels.Lookup(special)
		gi := int32(-1)
		if cur >= 0 && equalWithout(g.labels[cur], s.Labels, special) {
			gi = cur
		} else {
			h := s.Labels.HashWithout(special)
			if index == nil {
				index = make(map[uint64]int32)
			}
			cand, ok := index[h]
			if ok && equalWithout(g.labels[cand], s.Labels, special) {
				gi = cand
			} else if ok {
				// Hash collision: fall back to a scan.
				for k := range g.labels {
					if equalWithout(g.labels[k], s.Labels, special) {
						gi = int32(k)
						break
					}
				}
			}
			if gi < 0 {
				gi = int32(len(g.labels)) // #nosec G115 -- a histogram's label sets come from a body of at most 1 GiB (maxBodyMB), so their count fits in int32
				ls := s.Labels
				if hasSpecial {
					lo := len(backing)
					for _, l := range s.Labels {
						if l.Name != special {
							backing = append(backing, l)
						}
					}
					ls = backing[lo:len(backing):len(backing)]
				}
				g.labels = append(g.labels, ls)
				g.nSpecial = append(g.nSpecial, 0)
				if !ok {
					index[h] = gi
				}
			}
		}
		cur = gi
		g.of[i] = gi
		if hasSpecial {
			g.nSpecial[gi]++
			g.special++
		}
	}
	return g
}
