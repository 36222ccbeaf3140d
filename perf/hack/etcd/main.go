// Command etcd is a stock etcd server, built from the etcd version perf/go.mod
// resolves. Upstream's scheduler_perf harness starts one etcd process per
// workload and looks the binary up on PATH; `make etcd` builds this into bin/.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
