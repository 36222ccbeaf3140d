// Command kind-lb is the load balancer in front of a kind cluster's
// control-plane nodes, for machines that cannot pull the Envoy image kind
// runs there. kind starts its load-balancer container with
// `envoy -c /home/envoy/envoy.yaml` and then writes Envoy's listener (LDS)
// and cluster (CDS) files; this program, installed as `envoy`, reads the
// same files and does what that configuration asks of Envoy: it listens on
// the listener's port, health-checks each kube-apiserver on its /healthz
// (TLS, certificate not verified, as kind's ACCEPT_UNTRUSTED), and forwards
// each TCP connection to a healthy one in turn; when none is healthy it
// tries them all, as Envoy's panic mode does while the first control plane
// comes up.
//
// It is test infrastructure (e2e/infra), never part of the plugin.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"sigs.k8s.io/yaml"
)

func main() {
	bootstrap := flag.String("c", "/home/envoy/envoy.yaml", "Envoy's bootstrap file, as kind writes it")
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *bootstrap); err != nil && !errors.Is(err, context.Canceled) {
		log.Fatal(err)
	}
}

func run(ctx context.Context, bootstrapPath string) error {
	raw, err := os.ReadFile(bootstrapPath)
	if err != nil {
		return err
	}
	b, err := parseBootstrap(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", bootstrapPath, err)
	}
	log.Printf("listeners from %s, clusters from %s", b.LDS, b.CDS)
	p := &proxy{health: map[string]*hostHealth{}}
	// kind writes the two files after the container starts (a temporary
	// file moved into place): read them again whenever they change.
	var lastLDS, lastCDS, lastProblem string
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		lds, errL := os.ReadFile(b.LDS)
		cds, errC := os.ReadFile(b.CDS)
		if errL == nil && errC == nil && (string(lds) != lastLDS || string(cds) != lastCDS) {
			cfg, err := parseConfig(lds, cds)
			if err != nil {
				// Said once: until kind writes them, the files hold no resources.
				if err.Error() != lastProblem {
					log.Printf("waiting for a configuration: %v", err)
					lastProblem = err.Error()
				}
			} else {
				p.apply(ctx, cfg)
				lastLDS, lastCDS = string(lds), string(cds)
			}
		}
		select {
		case <-ctx.Done():
			p.close()
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// bootstrap is what kind's envoy.yaml says: where the listener and cluster
// files are.
type bootstrap struct{ LDS, CDS string }

func parseBootstrap(raw []byte) (bootstrap, error) {
	var doc struct {
		DynamicResources struct {
			CDS struct {
				PathConfigSource struct {
					Path string `json:"path"`
				} `json:"path_config_source"`
			} `json:"cds_config"`
			LDS struct {
				PathConfigSource struct {
					Path string `json:"path"`
				} `json:"path_config_source"`
			} `json:"lds_config"`
		} `json:"dynamic_resources"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return bootstrap{}, err
	}
	b := bootstrap{LDS: doc.DynamicResources.LDS.PathConfigSource.Path, CDS: doc.DynamicResources.CDS.PathConfigSource.Path}
	if b.LDS == "" || b.CDS == "" {
		return b, errors.New("no dynamic_resources.lds_config and cds_config path_config_source paths")
	}
	return b, nil
}

// config is the one listener and its cluster of backends.
type config struct {
	Listen    string   // host:port
	Backends  []string // host:port
	CheckPath string
	Interval  time.Duration
	Timeout   time.Duration
	Connect   time.Duration
	Unhealthy int // consecutive failures that make a healthy host unhealthy
	Healthy   int // consecutive successes that make an unhealthy host healthy
}

type socketAddress struct {
	Address   string `json:"address"`
	PortValue int    `json:"port_value"`
}

func (a socketAddress) String() string { return net.JoinHostPort(a.Address, strconv.Itoa(a.PortValue)) }

// parseConfig reads the listener and cluster kind writes: one TCP proxy
// listener whose filter names one cluster of endpoints.
func parseConfig(ldsRaw, cdsRaw []byte) (*config, error) {
	var lds struct {
		Resources []struct {
			Address struct {
				SocketAddress socketAddress `json:"socket_address"`
			} `json:"address"`
			FilterChains []struct {
				Filters []struct {
					TypedConfig struct {
						Cluster string `json:"cluster"`
					} `json:"typed_config"`
				} `json:"filters"`
			} `json:"filter_chains"`
		} `json:"resources"`
	}
	var cds struct {
		Resources []struct {
			Name           string `json:"name"`
			ConnectTimeout string `json:"connect_timeout"`
			HealthChecks   []struct {
				Timeout            string `json:"timeout"`
				Interval           string `json:"interval"`
				UnhealthyThreshold int    `json:"unhealthy_threshold"`
				HealthyThreshold   int    `json:"healthy_threshold"`
				HTTPHealthCheck    struct {
					Path string `json:"path"`
				} `json:"http_health_check"`
			} `json:"health_checks"`
			LoadAssignment struct {
				Endpoints []struct {
					LBEndpoints []struct {
						Endpoint struct {
							Address struct {
								SocketAddress socketAddress `json:"socket_address"`
							} `json:"address"`
						} `json:"endpoint"`
					} `json:"lb_endpoints"`
				} `json:"endpoints"`
			} `json:"load_assignment"`
		} `json:"resources"`
	}
	if err := yaml.Unmarshal(ldsRaw, &lds); err != nil {
		return nil, fmt.Errorf("listeners: %w", err)
	}
	if err := yaml.Unmarshal(cdsRaw, &cds); err != nil {
		return nil, fmt.Errorf("clusters: %w", err)
	}
	if len(lds.Resources) == 0 || len(cds.Resources) == 0 {
		return nil, errors.New("no listener or no cluster yet")
	}
	if len(lds.Resources) > 1 || len(cds.Resources) > 1 {
		return nil, fmt.Errorf("%d listeners and %d clusters: kind writes one of each", len(lds.Resources), len(cds.Resources))
	}
	l, c := lds.Resources[0], cds.Resources[0]
	var want string
	for _, fc := range l.FilterChains {
		for _, f := range fc.Filters {
			if f.TypedConfig.Cluster != "" {
				want = f.TypedConfig.Cluster
			}
		}
	}
	if want != c.Name {
		return nil, fmt.Errorf("the listener forwards to cluster %q, the cluster file holds %q", want, c.Name)
	}
	cfg := &config{Listen: l.Address.SocketAddress.String(), CheckPath: "/healthz",
		Interval: 2 * time.Second, Timeout: 3 * time.Second, Connect: 250 * time.Millisecond, Unhealthy: 2, Healthy: 1}
	if d, err := time.ParseDuration(c.ConnectTimeout); err == nil && d > 0 {
		cfg.Connect = d
	}
	if len(c.HealthChecks) > 0 {
		h := c.HealthChecks[0]
		if h.HTTPHealthCheck.Path != "" {
			cfg.CheckPath = h.HTTPHealthCheck.Path
		}
		for _, d := range []struct {
			s   string
			dst *time.Duration
		}{{h.Interval, &cfg.Interval}, {h.Timeout, &cfg.Timeout}} {
			if v, err := time.ParseDuration(d.s); err == nil && v > 0 {
				*d.dst = v
			}
		}
		if h.UnhealthyThreshold > 0 {
			cfg.Unhealthy = h.UnhealthyThreshold
		}
		if h.HealthyThreshold > 0 {
			cfg.Healthy = h.HealthyThreshold
		}
	}
	for _, e := range c.LoadAssignment.Endpoints {
		for _, lb := range e.LBEndpoints {
			cfg.Backends = append(cfg.Backends, lb.Endpoint.Address.SocketAddress.String())
		}
	}
	if len(cfg.Backends) == 0 {
		return nil, errors.New("the cluster has no endpoints")
	}
	slices.Sort(cfg.Backends)
	return cfg, nil
}

// hostHealth is one backend's health-check state.
type hostHealth struct {
	healthy          bool
	successes, fails int
}

type proxy struct {
	mu     sync.Mutex
	cfg    *config
	health map[string]*hostHealth
	next   int

	ln       net.Listener
	stopLoop context.CancelFunc
}

// apply starts serving cfg: a new listener when the address changed, and
// the health checks of its backends.
func (p *proxy) apply(ctx context.Context, cfg *config) {
	p.mu.Lock()
	old := p.cfg
	p.cfg = cfg
	for _, b := range cfg.Backends {
		if p.health[b] == nil {
			p.health[b] = &hostHealth{}
		}
	}
	if p.stopLoop != nil {
		p.stopLoop()
	}
	loopCtx, cancel := context.WithCancel(ctx)
	p.stopLoop = cancel
	p.mu.Unlock()
	log.Printf("listening on %s for %v", cfg.Listen, cfg.Backends)
	go p.check(loopCtx, cfg)
	if old != nil && old.Listen == cfg.Listen {
		return
	}
	if p.ln != nil {
		p.ln.Close()
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		log.Printf("listen %s: %v", cfg.Listen, err)
		return
	}
	p.ln = ln
	go p.serve(ln)
}

func (p *proxy) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopLoop != nil {
		p.stopLoop()
	}
	if p.ln != nil {
		p.ln.Close()
	}
}

// check health-checks every backend of cfg at its interval.
func (p *proxy) check(ctx context.Context, cfg *config) {
	client := &http.Client{
		Timeout:   cfg.Timeout,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true},
	}
	for {
		var wg sync.WaitGroup
		for _, b := range cfg.Backends {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok := probe(ctx, client, "https://"+b+cfg.CheckPath)
				p.observe(cfg, b, ok)
			}()
		}
		wg.Wait()
		select {
		case <-ctx.Done():
			return
		case <-time.After(cfg.Interval):
		}
	}
}

func probe(ctx context.Context, client *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode == http.StatusOK
}

func (p *proxy) observe(cfg *config, backend string, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.health[backend]
	if ok {
		h.successes, h.fails = h.successes+1, 0
		if !h.healthy && h.successes >= cfg.Healthy {
			h.healthy = true
			log.Printf("%s healthy", backend)
		}
		return
	}
	h.fails, h.successes = h.fails+1, 0
	if h.healthy && h.fails >= cfg.Unhealthy {
		h.healthy = false
		log.Printf("%s unhealthy", backend)
	}
}

// order is the backends to try for one connection: the healthy ones from the
// next in turn, then the others (all of them when none is healthy).
func (p *proxy) order() ([]string, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cfg := p.cfg
	var healthy, others []string
	n := len(cfg.Backends)
	for i := range n {
		b := cfg.Backends[(p.next+i)%n]
		if p.health[b].healthy {
			healthy = append(healthy, b)
		} else {
			others = append(others, b)
		}
	}
	p.next = (p.next + 1) % n
	return append(healthy, others...), cfg.Connect
}

func (p *proxy) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			log.Printf("accept: %v", err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		go p.forward(c)
	}
}

func (p *proxy) forward(c net.Conn) {
	defer c.Close()
	backends, timeout := p.order()
	var up net.Conn
	var errs []error
	for _, b := range backends {
		var err error
		if up, err = net.DialTimeout("tcp", b, timeout); err == nil {
			break
		}
		errs = append(errs, err)
	}
	if up == nil {
		log.Printf("%s: no backend answers: %v", c.RemoteAddr(), errors.Join(errs...))
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	<-done
}
