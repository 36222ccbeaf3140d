package metricscrape

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
)

// NewSPDYForwarder returns the Forwarder kubectl port-forward uses: a
// websocket tunnel, falling back to SPDY, listening on 127.0.0.1 on a free
// port. This is the only code that needs a real kubelet; it is exercised by
// the kind end-to-end test.
func NewSPDYForwarder(cfg *rest.Config) Forwarder {
	return func(ctx context.Context, namespace, pod string, port int) (int, func(), error) {
		client, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return 0, nil, err
		}
		u := client.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("portforward").URL()
		transport, upgrader, err := spdy.RoundTripperFor(cfg)
		if err != nil {
			return 0, nil, err
		}
		dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
		if tunnel, err := portforward.NewSPDYOverWebsocketDialer(u, cfg); err == nil {
			dialer = portforward.NewFallbackDialer(tunnel, dialer, func(err error) bool {
				return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
			})
		}

		readyCh := make(chan struct{})
		errOut := &syncBuffer{}
		// What the forwarder logs about a connection (a scheduler that is
		// restarting refuses it) goes with its other errors, not to stderr:
		// the scrape that used the connection fails and says so.
		logger := textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(errOut)))
		fctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
		fw, err := portforward.NewOnAddressesWithContext(fctx, dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", port)}, readyCh, io.Discard, errOut)
		if err != nil {
			cancel()
			return 0, nil, err
		}
		done := make(chan error, 1)
		go func() { done <- fw.ForwardPorts() }()
		var once sync.Once
		stop := func() {
			once.Do(cancel)
			<-done
			done <- nil // later calls return at once
		}
		select {
		case <-readyCh:
		case err := <-done:
			once.Do(cancel)
			if err == nil {
				err = fmt.Errorf("port-forward ended before it was ready")
			}
			return 0, nil, fmt.Errorf("%w%s", err, errOut.suffix())
		case <-ctx.Done():
			once.Do(cancel)
			return 0, nil, ctx.Err()
		}
		ports, err := fw.GetPorts()
		if err != nil || len(ports) == 0 {
			stop()
			return 0, nil, fmt.Errorf("port-forward has no local port: %v", err)
		}
		return int(ports[0].Local), stop, nil
	}
}

// syncBuffer collects what the port-forwarder reports on its error stream.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) suffix() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := strings.TrimSpace(b.buf.String())
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
