package embedded

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Fast raft timing for a single member that elects itself: a 10 ms tick and a
// 100 ms election timeout bring etcd's self-election from up to a second down
// to tens of milliseconds.
const (
	etcdTickMs     = 10
	etcdElectionMs = 100
)

// startEtcd starts a single-member etcd in dir, listening on loopback ports,
// and returns it once it serves. The client URL is e.Clients[0].Addr().
func startEtcd(ctx context.Context, dir string, logs *logSink) (*embed.Etcd, string, error) {
	var lastErr error
	// A free port found by listening and closing can be taken by someone
	// else before etcd binds it; try again with new ports.
	for try := 0; try < 3; try++ {
		e, clientURL, err := startEtcdOnce(ctx, dir, logs)
		if err == nil {
			return e, clientURL, nil
		}
		lastErr = err
		if !isAddrInUse(err) {
			break
		}
	}
	return nil, "", fmt.Errorf("etcd: %w", lastErr)
}

func startEtcdOnce(ctx context.Context, dir string, logs *logSink) (*embed.Etcd, string, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, "", err
	}
	clientURL := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))}
	peerURL := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))}

	cfg := embed.NewConfig()
	cfg.Name = "schedq"
	cfg.Dir = filepath.Join(dir, "etcd")
	cfg.TickMs = etcdTickMs
	cfg.ElectionMs = etcdElectionMs
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.ListenMetricsUrls = nil
	// The data lives for one run; fsync buys nothing.
	cfg.UnsafeNoFsync = true
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(logs.zapLogger())

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, "", err
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, clientURL.String(), nil
	case err := <-e.Err():
		e.Close()
		return nil, "", err
	case <-time.After(30 * time.Second):
		e.Close()
		return nil, "", errors.New("not ready after 30s")
	case <-ctx.Done():
		e.Close()
		return nil, "", ctx.Err()
	}
}

// zapLogger writes etcd's warnings and errors to the log sink.
func (l *logSink) zapLogger() *zap.Logger {
	if l.w == nil {
		return zap.NewNop()
	}
	enc := zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig())
	return zap.New(zapcore.NewCore(enc, zapcore.AddSync(l.w), zapcore.WarnLevel)).Named("etcd")
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
