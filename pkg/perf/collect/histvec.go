package collect

import (
	"errors"
	"fmt"
	"math"
	"sort"

	dto "github.com/prometheus/client_model/go"
)

// histogramVec is upstream's testutil.HistogramVec
// (k8s.io/component-base v0.36.3, metrics/testutil/metrics.go), which
// scheduler_perf's collectHistogramVec reduces to percentiles. It is
// rewritten here, quirks included (Validate refuses a zero sample sum), so
// that the plugin's module does not link component-base's metrics stack.
type histogramVec []*dto.Histogram

func (vec histogramVec) sampleCount() uint64 {
	var n uint64
	for _, h := range vec {
		n += h.GetSampleCount()
	}
	return n
}

func (vec histogramVec) sampleSum() float64 {
	var s float64
	for _, h := range vec {
		s += h.GetSampleSum()
	}
	return s
}

// quantile adds the histograms' buckets and interpolates the q-th
// quantile, as upstream's HistogramVec.Quantile.
func (vec histogramVec) quantile(q float64) float64 {
	var buckets []bucket
	for i, h := range vec {
		for j, b := range h.GetBucket() {
			if i == 0 {
				buckets = append(buckets, bucket{count: float64(b.GetCumulativeCount()), upperBound: b.GetUpperBound()})
			} else {
				buckets[j].count += float64(b.GetCumulativeCount())
			}
		}
	}
	if len(buckets) == 0 || buckets[len(buckets)-1].upperBound != math.Inf(+1) {
		// The exposition leaves out the +Inf bucket.
		buckets = append(buckets, bucket{count: float64(vec.sampleCount()), upperBound: math.Inf(+1)})
	}
	return bucketQuantile(q, buckets)
}

func (vec histogramVec) average() float64 {
	return vec.sampleSum() / float64(vec.sampleCount())
}

// validate is upstream's HistogramVec.Validate.
func (vec histogramVec) validate() error {
	size := 0
	for i, h := range vec {
		if h.SampleCount == nil || h.GetSampleCount() == 0 {
			return errors.New("nil or empty histogram SampleCount")
		}
		if h.SampleSum == nil || h.GetSampleSum() == 0 {
			return errors.New("nil or empty histogram SampleSum")
		}
		for _, b := range h.GetBucket() {
			if b == nil {
				return errors.New("empty histogram bucket")
			}
			if b.UpperBound == nil || b.GetUpperBound() < 0 {
				return errors.New("nil or negative histogram bucket UpperBound")
			}
		}
		if i == 0 {
			size = len(h.GetBucket())
		} else if size != len(h.GetBucket()) {
			return fmt.Errorf("found different bucket size: expect %v, but got %v at index %v", size, len(h.GetBucket()), i)
		}
	}
	return nil
}

type bucket struct {
	upperBound float64
	count      float64
}

// bucketQuantile is upstream's: linear interpolation inside the bucket
// that holds the rank, the last finite bound when it falls in +Inf.
func bucketQuantile(q float64, buckets []bucket) float64 {
	if q < 0 {
		return math.Inf(-1)
	}
	if q > 1 {
		return math.Inf(+1)
	}
	if len(buckets) < 2 {
		return math.NaN()
	}
	rank := q * buckets[len(buckets)-1].count
	b := sort.Search(len(buckets)-1, func(i int) bool { return buckets[i].count >= rank })
	if b == 0 {
		return buckets[0].upperBound * (rank / buckets[0].count)
	}
	if b == len(buckets)-1 && math.IsInf(buckets[b].upperBound, 1) {
		return buckets[len(buckets)-2].upperBound
	}
	brank := rank - buckets[b-1].count
	bSize := buckets[b].upperBound - buckets[b-1].upperBound
	bCount := buckets[b].count - buckets[b-1].count
	return buckets[b-1].upperBound + bSize*(brank/bCount)
}

// pairsMatch is upstream's testutil.LabelsMatch: every pair of filter is
// on the series.
func pairsMatch(pairs []*dto.LabelPair, filter map[string]string) bool {
	have := make(map[string]string, len(pairs))
	for _, p := range pairs {
		have[p.GetName()] = p.GetValue()
	}
	return labelsMatch(have, filter)
}
