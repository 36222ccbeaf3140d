package embedded

import (
	"flag"
	"io"
	"strconv"
	"sync"

	"google.golang.org/grpc/grpclog"
	"k8s.io/klog/v2"
)

// logSink is where the components' logs go: klog (kube-apiserver,
// kube-scheduler, client-go), etcd's zap logger and gRPC's logger. Logging is
// process-global, like feature gates.
type logSink struct {
	w io.Writer // nil: discard
}

// logOutput forwards to the current control plane's log writer. gRPC's logger
// can be set only once, before gRPC is used, so it writes here and the target
// changes per start.
var logOutput = &switchWriter{w: io.Discard}

type switchWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *switchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *switchWriter) set(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w = w
}

var grpcLoggerOnce sync.Once

// configureLogging sends klog and gRPC output to w (nil discards it) at klog
// verbosity v.
func configureLogging(w io.Writer, v int) *logSink {
	target := w
	if target == nil {
		target = io.Discard
	}
	logOutput.set(target)
	grpcLoggerOnce.Do(func() {
		grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, logOutput))
	})
	// A fresh flag set: klog's flags may already be registered on
	// flag.CommandLine, and registering them there twice panics.
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	for name, value := range map[string]string{
		"logtostderr":     "false",
		"alsologtostderr": "false",
		"stderrthreshold": "FATAL",
		"one_output":      "true",
		"v":               strconv.Itoa(v),
	} {
		_ = fs.Set(name, value)
	}
	klog.SetOutput(logOutput)
	return &logSink{w: w}
}

// silenceLogging discards whatever the components still log after a stop.
func silenceLogging() {
	logOutput.set(io.Discard)
}
