// Package embedded runs a real Kubernetes control plane in the calling
// process: etcd (go.etcd.io/etcd/server/v3/embed), kube-apiserver and
// kube-scheduler of the k8s.io/kubernetes version perf/go.mod requires, built
// through their own command packages, with fake Ready nodes and no kubelet.
// Pods are bound, never run, as in upstream's scheduler_perf.
//
// Besides a REST config and a kubeconfig, a control plane offers the ground
// truth of the scheduler's queue, read from its SchedulingQueue: as a Go call
// (ControlPlane.Queue) and over HTTP (QueueURL, see package groundtruth).
//
// Feature gates, metrics registries and logging are process-global. A process
// runs one control plane at a time, and every Start in a process must ask for
// the same feature gates; compare gate settings in separate processes (the
// tests re-run their own binary; bin/schedq-perf is one process per run).
package embedded

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/kubectl-schedq/kubectl-schedq/perf/groundtruth"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/outfile"
)

// ErrPortInUse is returned (wrapped) when Options.QueuePort is taken.
var ErrPortInUse = errors.New("port is in use (pick another, or 0 for any free port)")

// StartPhase is how long one step of Start took.
type StartPhase struct {
	Name     string
	Duration time.Duration
}

// Options configure one control plane.
type Options struct {
	// FeatureGates are set on the process's feature gate before anything
	// starts, e.g. {"SchedulerPopFromBackoffQ": false}. Unknown gates and
	// locked gates are errors.
	FeatureGates map[string]bool

	// SchedulerConfigFile is a KubeSchedulerConfiguration
	// (kubescheduler.config.k8s.io/v1) file. SchedulerConfigData is the
	// same already read (SchedulerConfigSource names it in errors), and
	// SchedulerConfig the same as an object. At most one may be set; with
	// none, every field has kube-scheduler's default.
	// clientConnection.kubeconfig is replaced by the control plane's own,
	// and leader election is turned off.
	SchedulerConfigFile   string
	SchedulerConfigData   []byte
	SchedulerConfigSource string
	SchedulerConfig       *configv1.KubeSchedulerConfiguration

	// PodMaxInUnschedulablePodsDuration is how long a pod may wait in
	// unschedulablePods before the leftover flush retries it, set through
	// kube-scheduler's deprecated --pod-max-in-unschedulable-pods-duration
	// flag; 0 leaves its default, 5 minutes.
	PodMaxInUnschedulablePodsDuration time.Duration

	// OutOfTreePlugins are registered beside the in-tree plugins, as an
	// out-of-tree scheduler build does with app.WithPlugin; a scheduler
	// configuration that enables one in a profile runs it.
	OutOfTreePlugins frameworkruntime.Registry

	// Nodes is how many fake nodes (FakeNode, named FakeNodeName(i)) to
	// create before Start returns.
	Nodes int

	// KubeconfigPath is where to write the admin kubeconfig; it must not
	// exist yet. Empty: a file in the control plane's temporary directory.
	// The file is removed by Stop.
	KubeconfigPath string

	// QueuePort is the loopback port of the ground-truth endpoint; 0 picks a
	// free one.
	QueuePort int
	// RecordPops logs when the scheduler pops each pod (Pops, and
	// groundtruth.PopsPath beside the queue); it grows with every attempt,
	// so it is off unless asked for.
	RecordPops bool

	// LogOutput receives the components' logs; nil discards them. LogLevel
	// is klog's verbosity (-v).
	LogOutput io.Writer
	LogLevel  int
	// LogToFile, without a LogOutput, writes the logs at LogLevel to a file
	// in the control plane's directory, removed at Stop: upstream's
	// scheduler_perf writes each test's log to a file at -v=2, "the default
	// log level in production", and a workload run pays the same for it.
	LogToFile bool

	// EtcdServers, when set, is an etcd to use (e.g. an EtcdProcess's URL)
	// instead of starting one in this process. Stop leaves it running.
	EtcdServers []string

	// FrontProxy gives kube-apiserver what kubeadm gives it for aggregated
	// API servers: a front-proxy CA, the client certificate the aggregator
	// proxies with (FrontProxyClientName) and request-header
	// authentication (X-Remote-User, X-Remote-Group, X-Remote-Extra-). An
	// APIService's backend then verifies the aggregator as a real one
	// does, against ControlPlane.FrontProxyCA.
	FrontProxy bool

	// AuthorizationModes is kube-apiserver's --authorization-mode; empty is
	// Node,RBAC, as kubeadm sets it, so that identities get only what RBAC
	// grants them.
	AuthorizationModes []string
}

// FrontProxyClientName is the common name of the aggregator's client
// certificate, kubeadm's, and kube-apiserver's --requestheader-allowed-names.
const FrontProxyClientName = "front-proxy-client"

// ControlPlane is a running etcd, kube-apiserver and kube-scheduler.
type ControlPlane struct {
	// RESTConfig is an admin (system:masters) client config for
	// kube-apiserver, with QPS 1000 and burst 2000.
	RESTConfig *rest.Config
	// KubeconfigPath is a kubeconfig with the same credentials; its cluster
	// carries the scheduler endpoint extension (metricscrape.KubeconfigExtensionName).
	KubeconfigPath string
	// APIServerURL is kube-apiserver's https URL.
	APIServerURL string
	// MetricsURL is kube-scheduler's /metrics (HTTPS; the kubeconfig's
	// credentials may read it).
	MetricsURL string
	// QueueURL is the ground truth, GET on loopback HTTP.
	QueueURL string
	// Scheduler is the running scheduler, for tests that look inside.
	Scheduler *scheduler.Scheduler
	// StartDuration is how long Start took, from its call until everything
	// was ready and the nodes were in the scheduler's cache.
	StartDuration time.Duration
	// FrontProxyCA is the PEM CA that signs the aggregator's client
	// certificate (Options.FrontProxy); nil without it.
	FrontProxyCA []byte
	// StartPhases splits StartDuration: preparation (certificates, files),
	// etcd, kube-apiserver (until /readyz), kube-scheduler (until /readyz),
	// nodes (until in the scheduler's cache).
	StartPhases []StartPhase

	ca         *authority
	dir        string
	logFile    *os.File // Options.LogToFile's
	removeKube bool
	etcd       interface{ Close() }
	apiserver  *apiserver
	sched      *kubeScheduler
	ctrl       *controllers
	queue      *queueServer

	stopOnce sync.Once
	stopErr  error
	done     chan struct{}
	doneOnce sync.Once
	failErr  error
}

// The process-wide state: one control plane at a time, one gate setting.
var process struct {
	mu      sync.Mutex
	running bool
	gates   map[string]bool // nil until the first start
}

// Start starts a control plane and returns once kube-apiserver and
// kube-scheduler are ready and the nodes are in the scheduler's cache. ctx
// bounds the start only; the control plane runs until Stop.
func Start(ctx context.Context, opts Options) (_ *ControlPlane, retErr error) {
	began := time.Now()
	if opts.PodMaxInUnschedulablePodsDuration < 0 {
		return nil, fmt.Errorf("PodMaxInUnschedulablePodsDuration: %v is negative", opts.PodMaxInUnschedulablePodsDuration)
	}
	if opts.Nodes < 0 {
		return nil, fmt.Errorf("nodes: %d is negative", opts.Nodes)
	}
	if err := validateFeatureGates(opts.FeatureGates); err != nil {
		return nil, err
	}
	schedCfg, err := schedulerConfig(opts)
	if err != nil {
		return nil, err
	}
	if opts.KubeconfigPath != "" {
		// Stop removes the file, so it must not be someone's kubeconfig.
		if _, err := os.Lstat(opts.KubeconfigPath); err == nil {
			return nil, fmt.Errorf("kubeconfig %s already exists; the control plane writes a new one there and removes it on Stop, so give a path that does not exist", opts.KubeconfigPath)
		}
	}
	if err := claimProcess(opts.FeatureGates); err != nil {
		return nil, err
	}
	defer func() {
		if retErr != nil {
			releaseProcess()
		}
	}()
	queueLn, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(opts.QueuePort)))
	if err != nil {
		if isAddrInUse(err) {
			return nil, fmt.Errorf("queue endpoint: port %d: %w", opts.QueuePort, ErrPortInUse)
		}
		return nil, fmt.Errorf("queue endpoint: %w", err)
	}

	cp := &ControlPlane{done: make(chan struct{})}
	last := began
	phase := func(name string) {
		now := time.Now()
		cp.StartPhases = append(cp.StartPhases, StartPhase{Name: name, Duration: now.Sub(last)})
		last = now
	}
	defer func() {
		if retErr != nil {
			queueLn.Close()
			cp.teardown()
		}
	}()
	removeStaleDirs()
	cp.dir, err = os.MkdirTemp("", tempDirPrefix)
	if err != nil {
		return nil, err
	}
	if err := outfile.WriteNew(filepath.Join(cp.dir, pidFile), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return nil, err
	}
	logOut := opts.LogOutput
	if logOut == nil && opts.LogToFile {
		if cp.logFile, err = outfile.CreateNew(filepath.Join(cp.dir, LogFileName), 0o600); err != nil {
			return nil, err
		}
		logOut = cp.logFile
	}
	logs := configureLogging(logOut, opts.LogLevel)
	f, adminToken, err := cp.writeFiles(schedCfg, opts.FrontProxy)
	if err != nil {
		return nil, err
	}

	phase("preparation")
	etcdURL := ""
	if len(opts.EtcdServers) > 0 {
		etcdURL = opts.EtcdServers[0]
	} else {
		e, u, err := startEtcd(ctx, cp.dir, logs)
		if err != nil {
			return nil, err
		}
		etcdURL = u
		cp.etcd = e
		go cp.watch("etcd", func() error { return <-e.Err() })
	}
	phase("etcd")

	if err := applyFeatureGates(opts.FeatureGates); err != nil {
		return nil, err
	}
	cp.apiserver, err = startAPIServer(etcdURL, f, opts.AuthorizationModes, runtimeConfig(opts.FeatureGates))
	if err != nil {
		return nil, err
	}
	go cp.watch("kube-apiserver", func() error { <-cp.apiserver.done; return cp.apiserver.err })
	cp.APIServerURL = cp.apiserver.url
	cp.RESTConfig = tokenConfig(cp.APIServerURL, adminToken, cp.ca.certPEM)
	cp.RESTConfig.QPS, cp.RESTConfig.Burst = 1000, 2000
	client, err := kubernetes.NewForConfig(cp.RESTConfig)
	if err != nil {
		return nil, err
	}
	if err := waitAPIServer(ctx, client, cp.apiserver.done); err != nil {
		return nil, err
	}
	phase("kube-apiserver")

	if err := (kubeconfig{server: cp.APIServerURL, caPEM: cp.ca.certPEM, user: "system:kube-scheduler", token: f.schedulerToken}).write(f.schedulerKubeconfig); err != nil {
		return nil, err
	}
	cp.sched, err = startScheduler(f, opts.PodMaxInUnschedulablePodsDuration, opts.OutOfTreePlugins, opts.RecordPops)
	if err != nil {
		return nil, err
	}
	go cp.watch("kube-scheduler", func() error { <-cp.sched.done; return cp.sched.err })
	cp.Scheduler = cp.sched.sched
	cp.MetricsURL = cp.sched.metricsURL
	if err := waitReadyz(ctx, cp.sched.readyzURL(), cp.sched.done); err != nil {
		return nil, fmt.Errorf("kube-scheduler: %w", err)
	}
	phase("kube-scheduler")

	if cp.ctrl, err = startControllers(client, opts.FeatureGates); err != nil {
		return nil, err
	}

	nodes := make([]*v1.Node, opts.Nodes)
	for i := range nodes {
		nodes[i] = FakeNode(FakeNodeName(i))
	}
	if err := CreateNodes(ctx, client, nodes...); err != nil {
		return nil, err
	}
	if err := poll(ctx, func() (bool, error) { return cp.Scheduler.Cache.NodeCount() >= opts.Nodes, nil }); err != nil {
		return nil, fmt.Errorf("waiting for %d nodes in the scheduler's cache: %w", opts.Nodes, err)
	}
	phase("nodes")

	cp.queue = serveQueue(queueLn, cp.Queue, cp.Pops)
	cp.QueueURL = "http://" + queueLn.Addr().String() + groundtruth.Path

	cp.KubeconfigPath = opts.KubeconfigPath
	if cp.KubeconfigPath == "" {
		cp.KubeconfigPath = filepath.Join(cp.dir, "kubeconfig")
	} else {
		cp.removeKube = true
	}
	admin := kubeconfig{
		server: cp.APIServerURL, caPEM: cp.ca.certPEM, user: "schedq-admin", token: adminToken,
		endpoint: &metricscrape.SchedulerEndpoint{
			APIVersion:            metricscrape.SchedulerEndpointAPIVersion,
			Kind:                  metricscrape.SchedulerEndpointKind,
			MetricsURL:            cp.MetricsURL,
			QueueURL:              cp.QueueURL,
			InsecureSkipTLSVerify: true,
		},
	}
	if err := admin.write(cp.KubeconfigPath); err != nil {
		return nil, fmt.Errorf("write kubeconfig: %w", err)
	}
	phase("kubeconfig")
	cp.StartDuration = time.Since(began)
	return cp, nil
}

// Queue returns the ground truth: every pod the scheduler's queue holds now.
func (cp *ControlPlane) Queue() groundtruth.Queue {
	return queueSnapshot(cp.sched.sched, cp.sched.inFlight)
}

// Pops returns when the scheduler popped each pod so far, by UID; empty
// unless Options.RecordPops.
func (cp *ControlPlane) Pops() groundtruth.Pops {
	return cp.sched.inFlight.popLog()
}

// Client returns an admin clientset.
func (cp *ControlPlane) Client() kubernetes.Interface {
	return kubernetes.NewForConfigOrDie(cp.RESTConfig)
}

// ClientConfigFor returns a client config for user in groups, authenticated
// by a client certificate the control plane's CA signs. With RBAC on, such a
// user may do only what (cluster) role bindings grant it.
func (cp *ControlPlane) ClientConfigFor(user string, groups ...string) (*rest.Config, error) {
	certPEM, keyPEM, err := cp.ca.issueClient(user, groups)
	if err != nil {
		return nil, err
	}
	return &rest.Config{
		Host: cp.APIServerURL,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   cp.ca.certPEM,
			CertData: certPEM,
			KeyData:  keyPEM,
		},
	}, nil
}

// MetricsClient returns an HTTP client for MetricsURL that presents config's
// credentials (a bearer token or a client certificate) and skips
// verification of the scheduler's certificate, like the kubeconfig
// extension says.
func MetricsClient(config *rest.Config) (*http.Client, error) {
	c := rest.CopyConfig(config)
	c.TLSClientConfig.Insecure = true
	c.TLSClientConfig.CAData = nil
	c.TLSClientConfig.CAFile = ""
	rt, err := rest.TransportFor(c)
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: rt, Timeout: 30 * time.Second}, nil
}

// Done is closed when a component stops on its own (Err says why) or when
// Stop is called.
func (cp *ControlPlane) Done() <-chan struct{} { return cp.done }

// Err is the reason Done was closed by a failing component, or nil.
func (cp *ControlPlane) Err() error {
	select {
	case <-cp.done:
		return cp.failErr
	default:
		return nil
	}
}

// watch closes Done with the error of a component that returned while the
// control plane was meant to run.
func (cp *ControlPlane) watch(name string, wait func() error) {
	err := wait()
	cp.doneOnce.Do(func() {
		if err == nil {
			err = errors.New("stopped")
		}
		cp.failErr = fmt.Errorf("%s: %w", name, err)
		close(cp.done)
	})
}

// Stop stops the scheduler, kube-apiserver and etcd, in that order, waits
// until they have, and removes every file the control plane wrote
// (including KubeconfigPath). It may be called more than once.
func (cp *ControlPlane) Stop() error {
	cp.stopOnce.Do(func() {
		cp.doneOnce.Do(func() { close(cp.done) })
		cp.stopErr = cp.teardown()
		releaseProcess()
	})
	return cp.stopErr
}

func (cp *ControlPlane) teardown() error {
	var errs []error
	if cp.queue != nil {
		cp.queue.stop()
	}
	cp.ctrl.stop()
	if cp.sched != nil {
		cp.sched.stop()
	}
	if cp.apiserver != nil {
		if err := cp.apiserver.stop(); err != nil {
			errs = append(errs, err)
		}
	}
	if cp.etcd != nil {
		cp.etcd.Close()
	}
	silenceLogging()
	if cp.logFile != nil {
		cp.logFile.Close()
	}
	if cp.removeKube {
		if err := os.Remove(cp.KubeconfigPath); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if cp.dir != "" {
		if err := os.RemoveAll(cp.dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// files are the paths of what a control plane keeps on disk, all in its
// temporary directory.
type files struct {
	dir                                  string
	caCert                               string
	apiserverCert, apiserverKey          string
	schedulerCert, schedulerKey          string
	saKey                                string
	tokens                               string
	schedulerKubeconfig, schedulerConfig string
	schedulerToken                       string
	// The front proxy's (Options.FrontProxy), empty without it.
	frontProxyCA, frontProxyCert, frontProxyKey string
}

// writeFiles creates the CA, the serving certificates, the service account
// signing key, the static token file (an admin in system:masters, and
// system:kube-scheduler with the scheduler's bootstrap RBAC roles) and the
// scheduler configuration. It returns the admin's token.
func (cp *ControlPlane) writeFiles(schedCfg *config.KubeSchedulerConfiguration, frontProxy bool) (*files, string, error) {
	ca, err := newAuthority("schedq-embedded-ca")
	if err != nil {
		return nil, "", err
	}
	cp.ca = ca
	p := func(name string) string { return filepath.Join(cp.dir, name) }
	f := &files{
		dir:                 cp.dir,
		caCert:              p("ca.crt"),
		apiserverCert:       p("apiserver.crt"),
		apiserverKey:        p("apiserver.key"),
		schedulerCert:       p("scheduler.crt"),
		schedulerKey:        p("scheduler.key"),
		saKey:               p("sa.key"),
		tokens:              p("tokens.csv"),
		schedulerKubeconfig: p("scheduler.kubeconfig"),
		schedulerConfig:     p("scheduler-config.yaml"),
		schedulerToken:      newToken(),
	}
	adminToken := newToken()
	write := map[string][]byte{
		f.caCert: ca.certPEM,
		f.tokens: []byte(adminToken + ",schedq-admin,schedq-admin,\"system:masters\"\n" +
			f.schedulerToken + ",system:kube-scheduler,system:kube-scheduler\n"),
	}
	if write[f.apiserverCert], write[f.apiserverKey], err = ca.issueServing("kube-apiserver"); err != nil {
		return nil, "", err
	}
	if write[f.schedulerCert], write[f.schedulerKey], err = ca.issueServing("kube-scheduler"); err != nil {
		return nil, "", err
	}
	if write[f.saKey], err = newSigningKey(); err != nil {
		return nil, "", err
	}
	if frontProxy {
		fp, err := newAuthority("schedq-embedded-front-proxy-ca")
		if err != nil {
			return nil, "", err
		}
		cp.FrontProxyCA = fp.certPEM
		f.frontProxyCA, f.frontProxyCert, f.frontProxyKey = p("front-proxy-ca.crt"), p("front-proxy-client.crt"), p("front-proxy-client.key")
		write[f.frontProxyCA] = fp.certPEM
		if write[f.frontProxyCert], write[f.frontProxyKey], err = fp.issueClient(FrontProxyClientName, nil); err != nil {
			return nil, "", err
		}
	}
	for path, data := range write {
		if err := outfile.WriteNew(path, data, 0o600); err != nil {
			return nil, "", err
		}
	}
	if err := writeSchedulerConfig(schedCfg, f.schedulerKubeconfig, f.schedulerConfig); err != nil {
		return nil, "", fmt.Errorf("write scheduler config: %w", err)
	}
	return f, adminToken, nil
}

// validateFeatureGates checks gates against a copy of the process's feature
// gate, so that a bad name changes nothing.
func validateFeatureGates(gates map[string]bool) error {
	if len(gates) == 0 {
		return nil
	}
	if err := utilfeature.DefaultMutableFeatureGate.DeepCopy().SetFromMap(gates); err != nil {
		return fmt.Errorf("feature gates: %w", err)
	}
	return nil
}

func claimProcess(gates map[string]bool) error {
	process.mu.Lock()
	defer process.mu.Unlock()
	if process.running {
		return errors.New("a control plane is already running in this process; stop it first (feature gates and metrics are process-global)")
	}
	if want := normalGates(gates); process.gates != nil && !maps.Equal(process.gates, want) {
		return fmt.Errorf("feature gates are process-global: this process already ran a control plane with %s, so it cannot run one with %s; use a separate process",
			FormatFeatureGates(process.gates), FormatFeatureGates(want))
	}
	process.running = true
	return nil
}

// applyFeatureGates sets gates on the process's feature gate, which
// kube-apiserver and kube-scheduler share, and remembers them.
func applyFeatureGates(gates map[string]bool) error {
	process.mu.Lock()
	defer process.mu.Unlock()
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(gates); err != nil {
		return fmt.Errorf("feature gates: %w", err)
	}
	process.gates = normalGates(gates)
	return nil
}

func normalGates(gates map[string]bool) map[string]bool {
	if gates == nil {
		return map[string]bool{}
	}
	return maps.Clone(gates)
}

func releaseProcess() {
	process.mu.Lock()
	defer process.mu.Unlock()
	process.running = false
}

// ParseFeatureGates parses "Name=true,Other=false", the syntax of
// --feature-gates.
func ParseFeatureGates(s string) (map[string]bool, error) {
	gates := map[string]bool{}
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("feature gate %q: want Name=true or Name=false", kv)
		}
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("feature gate %q: %q is not a boolean", kv, v)
		}
		gates[strings.TrimSpace(k)] = b
	}
	return gates, nil
}

// FormatFeatureGates writes gates the way ParseFeatureGates reads them,
// sorted; "none" for no gates.
func FormatFeatureGates(gates map[string]bool) string {
	if len(gates) == 0 {
		return "none"
	}
	return formatGates(gates)
}

// waitAPIServer waits for kube-apiserver's /readyz and the default namespace.
func waitAPIServer(ctx context.Context, client kubernetes.Interface, died <-chan struct{}) error {
	err := poll(ctx, func() (bool, error) {
		select {
		case <-died:
			return false, errors.New("kube-apiserver stopped while starting")
		default:
		}
		var status int
		client.CoreV1().RESTClient().Get().AbsPath("/readyz").Do(ctx).StatusCode(&status)
		if status != http.StatusOK {
			return false, nil
		}
		_, err := client.CoreV1().Namespaces().Get(ctx, metav1.NamespaceDefault, metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("kube-apiserver: waiting for /readyz: %w", err)
	}
	return nil
}

// waitReadyz waits until url (an HTTPS /readyz that needs no credentials)
// answers 200.
func waitReadyz(ctx context.Context, url string, died <-chan struct{}) error {
	client := &http.Client{
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
		Timeout:   5 * time.Second,
	}
	defer client.CloseIdleConnections()
	return poll(ctx, func() (bool, error) {
		select {
		case <-died:
			return false, errors.New("stopped while starting")
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// startTimeout bounds each wait of a start.
const startTimeout = 60 * time.Second

// poll calls cond every 10 ms until it is true, fails, ctx ends or
// startTimeout passes.
func poll(ctx context.Context, cond func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// A control plane's files live in a directory named tempDirPrefix* under
// os.TempDir, with the owning process's id in pidFile.
const (
	tempDirPrefix = "schedq-embedded-"
	// LogFileName is Options.LogToFile's file in the control plane's
	// directory.
	LogFileName = "control-plane.log"
	pidFile     = "pid"
)

// staleDirAge is how old a directory without a pid file must be before it
// counts as stale: one being created by another process has none for a moment.
const staleDirAge = time.Hour

// removeStaleDirs removes the directories of control planes whose process
// died without Stop (killed, or a test that timed out), so that such runs
// leave no files behind for long.
func removeStaleDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempDirPrefix+"*"))
	for _, dir := range dirs {
		data, err := bound.ReadFile(context.Background(), filepath.Join(dir, pidFile), 64)
		if err != nil {
			if fi, statErr := os.Stat(dir); statErr == nil && fi.IsDir() && time.Since(fi.ModTime()) > staleDirAge {
				os.RemoveAll(dir)
			}
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(dir)
		}
	}
}

// FormatStartPhases writes phases as "etcd 0.21s, kube-apiserver 1.9s, …".
func FormatStartPhases(phases []StartPhase) string {
	parts := make([]string, len(phases))
	for i, p := range phases {
		parts[i] = fmt.Sprintf("%s %v", p.Name, p.Duration.Round(10*time.Millisecond))
	}
	return strings.Join(parts, ", ")
}

func isAddrInUse(err error) bool { return errors.Is(err, syscall.EADDRINUSE) }
