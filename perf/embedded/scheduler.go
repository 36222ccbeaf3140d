package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/configz"
	// kubernetes_build_info, as kube-scheduler's main registers it.
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/outfile"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// schedulerConfig reads the scheduler configuration of opts (a file, an
// object or the defaults), decodes it strictly and validates it the way
// kube-scheduler does, and returns it. Errors name where it came from.
func schedulerConfig(opts Options) (*config.KubeSchedulerConfiguration, error) {
	var data []byte
	source := "the default scheduler configuration"
	set := 0
	for _, ok := range []bool{opts.SchedulerConfigFile != "", opts.SchedulerConfigData != nil, opts.SchedulerConfig != nil} {
		if ok {
			set++
		}
	}
	switch {
	case set > 1:
		return nil, errors.New("SchedulerConfigFile, SchedulerConfigData and SchedulerConfig are mutually exclusive")
	case opts.SchedulerConfigData != nil:
		source, data = opts.SchedulerConfigSource, opts.SchedulerConfigData
		if source == "" {
			source = "Options.SchedulerConfigData"
		}
	case opts.SchedulerConfigFile != "":
		source = opts.SchedulerConfigFile
		var err error
		if data, err = bound.ReadFile(context.Background(), opts.SchedulerConfigFile, workload.MaxFileBytes); err != nil {
			return nil, fmt.Errorf("scheduler config: %w", err)
		}
	case opts.SchedulerConfig != nil:
		source = "Options.SchedulerConfig"
		obj := opts.SchedulerConfig.DeepCopy()
		obj.APIVersion = configv1.SchemeGroupVersion.String()
		obj.Kind = "KubeSchedulerConfiguration"
		var err error
		if data, err = json.Marshal(obj); err != nil {
			return nil, fmt.Errorf("scheduler config %s: %w", source, err)
		}
	default:
		data = defaultSchedulerConfig()
	}
	obj, gvk, err := scheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
	if runtime.IsNotRegisteredError(err) || runtime.IsMissingKind(err) || runtime.IsMissingVersion(err) {
		return nil, fmt.Errorf("scheduler config %s: want apiVersion kubescheduler.config.k8s.io/v1 and kind KubeSchedulerConfiguration (%w)", source, err)
	}
	if err != nil {
		return nil, fmt.Errorf("scheduler config %s: %w", source, err)
	}
	cfg, ok := obj.(*config.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("scheduler config %s: got %s, want kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration", source, gvk)
	}
	cfg.TypeMeta.APIVersion = gvk.GroupVersion().String()
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		return nil, fmt.Errorf("scheduler config %s: %w", source, err)
	}
	return cfg, nil
}

// writeSchedulerConfig writes cfg, pointed at kubeconfig and without leader
// election, to path as kubescheduler.config.k8s.io/v1 YAML.
func writeSchedulerConfig(cfg *config.KubeSchedulerConfiguration, kubeconfig, path string) error {
	cfg = cfg.DeepCopy()
	cfg.ClientConnection.Kubeconfig = kubeconfig
	// With leader election, app.Run exits the process when its context ends.
	cfg.LeaderElection.LeaderElect = false
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeYAML)
	if !ok {
		return errors.New("no YAML serializer for the scheduler configuration")
	}
	var buf bytes.Buffer
	if err := scheme.Codecs.EncoderForVersion(info.Serializer, configv1.SchemeGroupVersion).Encode(cfg, &buf); err != nil {
		return err
	}
	return outfile.WriteNew(path, buf.Bytes(), 0o600)
}

// kubeScheduler is a running kube-scheduler.
type kubeScheduler struct {
	sched *scheduler.Scheduler
	// clientConfig is the configuration of its client to kube-apiserver.
	clientConfig *rest.Config
	metricsURL   string
	inFlight     *inFlightRecorder
	cancel       context.CancelFunc
	done         chan struct{} // closed when app.Run has returned
	err          error         // app.Run's error, once done is closed
}

// startScheduler starts kube-scheduler through cmd/kube-scheduler/app: its
// flags, options, Setup and Run, as `kube-scheduler --config=...` would;
// podMaxInUnschedulable, if not 0, is its
// --pod-max-in-unschedulable-pods-duration; outOfTree are registered as
// app.WithPlugin does.
func startScheduler(f *files, podMaxInUnschedulable time.Duration, outOfTree frameworkruntime.Registry, recordPops bool) (*kubeScheduler, error) {
	opts := options.NewOptions()
	fs := pflag.NewFlagSet("kube-scheduler", pflag.ContinueOnError)
	for _, set := range opts.Flags.FlagSets {
		fs.AddFlagSet(set)
	}
	args := []string{
		"--config=" + f.schedulerConfig,
		"--authentication-kubeconfig=" + f.schedulerKubeconfig,
		"--authorization-kubeconfig=" + f.schedulerKubeconfig,
		"--tls-cert-file=" + f.schedulerCert,
		"--tls-private-key-file=" + f.schedulerKey,
		"--leader-elect=false",
	}
	if podMaxInUnschedulable > 0 {
		args = append(args, "--pod-max-in-unschedulable-pods-duration="+podMaxInUnschedulable.String())
	}
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("kube-scheduler flags: %w", err)
	}
	if err := opts.ComponentGlobalsRegistry.Set(); err != nil {
		return nil, fmt.Errorf("kube-scheduler: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("kube-scheduler: %w", err)
	}
	opts.SecureServing.Listener = ln
	opts.SecureServing.BindPort = ln.Addr().(*net.TCPAddr).Port

	ctx, cancel := context.WithCancel(context.Background())
	ctx = klog.NewContext(ctx, klog.Background().WithName("kube-scheduler"))
	var registryOptions []app.Option
	for _, name := range slices.Sorted(maps.Keys(outOfTree)) {
		registryOptions = append(registryOptions, app.WithPlugin(name, outOfTree[name]))
	}
	cc, sched, err := app.Setup(ctx, opts, registryOptions...)
	if err != nil {
		cancel()
		ln.Close()
		if agg, ok := err.(utilerrors.Aggregate); ok && len(agg.Errors()) == 1 {
			err = agg.Errors()[0]
		}
		return nil, fmt.Errorf("kube-scheduler: %w", err)
	}
	// What kube-scheduler's runCommand does after Setup: the gate and
	// version gauges (kubernetes_feature_enabled, component version), so that
	// the metrics look like a real scheduler's. Both only record values.
	utilfeature.DefaultMutableFeatureGate.AddMetrics()
	opts.ComponentGlobalsRegistry.AddMetrics()
	rec := newInFlightRecorder(sched, recordPops)
	s := &kubeScheduler{
		sched:        sched,
		clientConfig: cc.KubeConfig,
		metricsURL:   "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(opts.SecureServing.BindPort)) + "/metrics",
		inFlight:     rec,
		cancel:       cancel,
		done:         make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		s.err = app.Run(ctx, cc, sched)
	}()
	return s, nil
}

// readyzURL is the scheduler's /readyz, which turns 200 once its informers
// and event handlers have synced.
func (s *kubeScheduler) readyzURL() string {
	return s.metricsURL[:len(s.metricsURL)-len("/metrics")] + "/readyz"
}

// stop stops kube-scheduler and waits until its loops and its secure server
// have.
func (s *kubeScheduler) stop() {
	s.cancel()
	<-s.done
	// app.Run registers the scheduler's configuration under this name; a
	// later start in the same process registers it again.
	configz.Delete("componentconfig")
}
