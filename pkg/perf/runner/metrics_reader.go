package runner

import (
	"context"

	dto "github.com/prometheus/client_model/go"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/collect"
)

// MetricsReader reads the scheduler's metrics, all families.
type MetricsReader interface {
	ReadMetrics(ctx context.Context) (collect.Families, error)
	// String names the source in messages.
	String() string
}

// GathererReader reads a Prometheus gatherer in this process, such as
// k8s.io/component-base/metrics/legacyregistry.DefaultGatherer.Gather when
// the scheduler runs here (what upstream's collectors read).
type GathererReader struct {
	Func func() ([]*dto.MetricFamily, error)
	Name string
}

// ReadMetrics implements MetricsReader.
func (g GathererReader) ReadMetrics(context.Context) (collect.Families, error) {
	list, err := g.Func()
	if err != nil {
		return nil, err
	}
	return collect.FamiliesFrom(list), nil
}

func (g GathererReader) String() string { return g.Name }
