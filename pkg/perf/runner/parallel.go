package runner

import (
	"context"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/util/workqueue"
)

// createInParallel runs create(ctx, i) for every i below n on up to workers
// goroutines, as upstream's creators do. The first error cancels the calls
// still to come and is returned; created counts the calls that succeeded.
func createInParallel(ctx context.Context, workers, n int, create func(ctx context.Context, i int) error) (created int, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		ok       atomic.Int64
	)
	workqueue.ParallelizeUntil(ctx, min(workers, max(n, 1)), n, func(i int) {
		if err := create(ctx, i); err != nil {
			mu.Lock()
			defer mu.Unlock()
			if firstErr == nil && ctx.Err() == nil {
				firstErr = err
				cancel()
			}
			return
		}
		ok.Add(1)
	})
	return int(ok.Load()), firstErr
}
