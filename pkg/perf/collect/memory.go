package collect

import (
	"runtime"
	"sort"
	"sync"
	"time"
)

// MemoryInterval is upstream's memory sampling interval.
const MemoryInterval = 500 * time.Millisecond

// Memory is upstream's memoryCollector: the calling process's HeapInuse,
// sampled every MemoryInterval. It only means something when the control
// plane runs in this process (the embedded provider), as upstream's does.
type Memory struct {
	labels  map[string]string
	mu      sync.Mutex
	times   []time.Time
	heapMiB []float64
	read    func() float64
}

// NewMemory returns a collector whose items carry labels; it takes its
// first sample now.
func NewMemory(labels map[string]string) *Memory {
	m := &Memory{labels: cloneLabels(labels), read: heapInuseMiB}
	m.Sample(time.Now())
	return m
}

func heapInuseMiB() float64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapInuse) / 1024 / 1024
}

// Sample records one sample taken at now.
func (m *Memory) Sample(now time.Time) {
	v := m.read()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.times = append(m.times, now)
	m.heapMiB = append(m.heapMiB, v)
}

// DataItems returns heap_memory_usage (MB: Perc50/90/95/99, Average, Max)
// and memory_growth_rate (MB/min, GrowthRate), upstream's.
func (m *Memory) DataItems() []DataItem {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.heapMiB)
	if n == 0 {
		return nil
	}
	growth := 0.0
	if minutes := m.times[n-1].Sub(m.times[0]).Minutes(); minutes > 0 {
		growth = (m.heapMiB[n-1] - m.heapMiB[0]) / minutes
	}
	values := append([]float64(nil), m.heapMiB...)
	sort.Float64s(values)
	data := Summary(values)
	data["Max"] = values[len(values)-1]
	heap := cloneLabels(m.labels)
	heap[LabelMetric] = MetricHeapMemoryUsage
	rate := cloneLabels(m.labels)
	rate[LabelMetric] = MetricMemoryGrowthRate
	return []DataItem{
		{Data: data, Unit: "MB", Labels: heap},
		{Data: map[string]float64{"GrowthRate": growth}, Unit: "MB/min", Labels: rate},
	}
}

// DurationItem is upstream's SchedulingDuration: the window's wall time in
// seconds, pod creation included.
func DurationItem(labels map[string]string, d time.Duration) DataItem {
	lb := cloneLabels(labels)
	lb[LabelMetric] = MetricSchedulingDuration
	return DataItem{Data: map[string]float64{"Duration": d.Seconds()}, Unit: "s", Labels: lb}
}
