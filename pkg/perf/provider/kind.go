package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/apis/config/defaults"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster"
	kindexec "sigs.k8s.io/kind/pkg/exec"
	"sigs.k8s.io/kind/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// Kind creates a kind cluster per workload: the real kube-scheduler,
// kube-apiserver and kube-controller-manager of a kind node image
// (KindDefaultImage unless Image names one), configured the way
// upstream's in-process harness runs them (see KindConfig). The scheduler's
// metrics are read through a port-forward. The cluster is deleted after the
// workload unless Keep.
type Kind struct {
	// Image is the node image; empty for kind's default.
	Image string `json:"image,omitempty"`
	// ClusterName is the cluster's name; empty for schedq-perf-<run id>.
	ClusterName string `json:"name,omitempty"`
	// Keep keeps the cluster after the workload.
	Keep bool `json:"keep,omitempty"`
}

func init() {
	Register(Registration{
		Name:     NameKind,
		Starting: "creating a kind cluster",
		Flags:    []string{FlagKindImage, FlagKindName, FlagKeep},
		LeftBehind: func(s Settings, runID string) string {
			name := s.KindName
			if name == "" {
				name = KindClusterName(runID)
			}
			return fmt.Sprintf("the kind cluster %s may be left: kind delete cluster --name %s", name, name)
		},
		New: func(s Settings) Provider {
			return &Kind{Image: s.KindImage, ClusterName: s.KindName, Keep: s.Keep}
		},
	})
}

// ErrNoContainerRuntime is returned when kind has nothing to run its node
// containers with. The remedy names only what the plugin runs.
var ErrNoContainerRuntime = errors.New("kind needs Docker (or Podman or nerdctl) and none answers on this machine; start one, or run on a cluster you name with --cluster kubeconfig --allow-existing-cluster")

// KindDefaultImage is the node image kind uses when none is named: kind's
// own default for the kind library linked here (kindest/node:v1.37.0 for
// kind v0.33.0), without its digest. kind pulls it when it is missing.
func KindDefaultImage() string {
	image, _, _ := strings.Cut(defaults.Image, "@")
	return image
}

// kindImageAdvice is what a failed kind create adds about the node image
// when the image could not be pulled: offline, the run needs an image this
// machine already has, named with --kind-image.
func kindImageAdvice(image string, named bool, err error) string {
	if err == nil || !strings.Contains(err.Error(), "failed to pull image") {
		return ""
	}
	if named {
		return fmt.Sprintf("; the node image %s is not on this machine and could not be pulled: docker images lists the images here, and --%s names one", image, FlagKindImage)
	}
	return fmt.Sprintf("; kind's default node image %s could not be pulled (no network or no registry?): name a node image this machine has with --%s IMAGE (docker load one saved elsewhere, or build one with kind build node-image)", KindDefaultImage(), FlagKindImage)
}

// Name implements Provider.
func (*Kind) Name() string { return NameKind }

// KindClusterName is the cluster a run creates without --kind-name.
func KindClusterName(runID string) string {
	if runID == "" {
		runID = runner.NewRunID()
	}
	return "schedq-perf-" + runID
}

// KindSchedulerConfigDir is where the node sees the scheduler configuration.
const KindSchedulerConfigDir = "/etc/kubernetes/schedq"

// kindSchedulerKubeconfig is kubeadm's kubeconfig for kube-scheduler.
const kindSchedulerKubeconfig = "/etc/kubernetes/scheduler.conf"

// kindControllers are kube-controller-manager's controllers: kubeadm's
// default without the node lifecycle controller, which would taint the
// fake nodes (no kubelet renews their leases) and evict their pods.
const kindControllers = "*,bootstrapsigner,tokencleaner,-node-lifecycle-controller"

// kindDisabledAdmission are the admission plugins upstream's harness turns
// off: TaintNodesByCondition would taint every new node not-ready,
// ServiceAccount would race with namespace creation, and Priority rejects
// the pods of upstream's templates that set spec.priority.
const kindDisabledAdmission = "ServiceAccount,TaintNodesByCondition,Priority"

// kindPodGroupAPI is the API version of PodGroup (GenericWorkload, beta
// in v1.37), which kube-apiserver serves only when asked to.
const kindPodGroupAPI = "scheduling.k8s.io/v1beta1"

// KindRuntimeConfig is the API versions kube-apiserver must serve for the
// gates beyond its defaults, as --runtime-config takes them: upstream's
// scheduler_perf rule (mustSetupCluster) for GenericWorkload, whose
// scheduler otherwise waits forever on a PodGroup informer that cannot
// list, and whose workloads cannot create PodGroups. Nil when none.
func KindRuntimeConfig(gates map[string]bool) map[string]string {
	if !gates[metricscrape.GateGenericWorkload] {
		return nil
	}
	return map[string]string{kindPodGroupAPI: "true"}
}

// KindConfig is the kind cluster configuration for a workload: one
// control-plane node that mounts hostSchedulerDir (holding
// scheduler-config.yaml) at KindSchedulerConfigDir; the feature gates on
// every component; the API versions they need served (KindRuntimeConfig);
// kube-scheduler started with --config; the node lifecycle controller and
// the TaintNodesByCondition admission plugin off, so that fake nodes stay
// schedulable; no CNI and no kube-proxy, so that no DaemonSet puts pods on
// the fake nodes. With an emulation version, every control-plane component
// emulates it.
func KindConfig(name string, gates map[string]bool, emulationVersion, hostSchedulerDir string) (*v1alpha4.Cluster, error) {
	gateArg := workload.FormatGates(gates)
	runtimeConfig := KindRuntimeConfig(gates)
	common := func(args ...arg) []arg {
		if gateArg != "" {
			args = append(args, arg{"feature-gates", gateArg})
		}
		if emulationVersion != "" {
			args = append(args, arg{"emulated-version", emulationVersion})
		}
		return args
	}
	apiserverArgs := []arg{{"disable-admission-plugins", kindDisabledAdmission}}
	if len(runtimeConfig) > 0 {
		// kind writes RuntimeConfig into the apiserver's extraArgs, which
		// this patch replaces: the patch carries it too.
		apiserverArgs = append(apiserverArgs, arg{"runtime-config", formatRuntimeConfig(runtimeConfig)})
	}
	patch := clusterConfigurationPatch{
		Kind:      "ClusterConfiguration",
		APIServer: component{ExtraArgs: common(apiserverArgs...)},
		ControllerManager: component{ExtraArgs: common(
			arg{"controllers", kindControllers},
			arg{"enable-hostpath-provisioner", "true"},
		)},
		Scheduler: component{
			ExtraArgs: common(arg{"config", KindSchedulerConfigDir + "/scheduler-config.yaml"}),
			ExtraVolumes: []volume{{
				Name: "schedq", HostPath: KindSchedulerConfigDir, MountPath: KindSchedulerConfigDir,
				ReadOnly: true, PathType: "DirectoryOrCreate",
			}},
		},
	}
	data, err := yaml.Marshal(patch)
	if err != nil {
		return nil, err
	}
	cfg := &v1alpha4.Cluster{
		TypeMeta:      v1alpha4.TypeMeta{Kind: "Cluster", APIVersion: "kind.x-k8s.io/v1alpha4"},
		Name:          name,
		FeatureGates:  gates,
		RuntimeConfig: runtimeConfig,
		Networking: v1alpha4.Networking{
			DisableDefaultCNI: true,
			KubeProxyMode:     "none",
		},
		Nodes: []v1alpha4.Node{{
			Role: v1alpha4.ControlPlaneRole,
			ExtraMounts: []v1alpha4.Mount{{
				HostPath: hostSchedulerDir, ContainerPath: KindSchedulerConfigDir, Readonly: true,
			}},
		}},
		// No apiVersion: kind applies the patch to the kubeadm version it
		// generates (v1beta4 for Kubernetes 1.36), whose extraArgs are
		// lists. A merge patch replaces kind's own lists, so each list
		// here is complete (kind's feature-gates and the controller
		// manager's enable-hostpath-provisioner included).
		KubeadmConfigPatches: []string{string(data)},
	}
	return cfg, nil
}

// formatRuntimeConfig writes rc as --runtime-config takes it, sorted as
// kind writes it.
func formatRuntimeConfig(rc map[string]string) string {
	keys := make([]string, 0, len(rc))
	for k := range rc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		keys[i] = k + "=" + rc[k]
	}
	return strings.Join(keys, ",")
}

type arg struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type volume struct {
	Name      string `json:"name"`
	HostPath  string `json:"hostPath"`
	MountPath string `json:"mountPath"`
	ReadOnly  bool   `json:"readOnly"`
	PathType  string `json:"pathType"`
}

type component struct {
	ExtraArgs    []arg    `json:"extraArgs"`
	ExtraVolumes []volume `json:"extraVolumes,omitempty"`
}

type clusterConfigurationPatch struct {
	Kind              string    `json:"kind"`
	APIServer         component `json:"apiServer"`
	ControllerManager component `json:"controllerManager"`
	Scheduler         component `json:"scheduler"`
}

// KindSchedulerConfig is the scheduler configuration mounted into the kind
// node: SchedulerConfigFrom's, with kubeadm's scheduler kubeconfig.
func KindSchedulerConfig(cfg []byte, path string) ([]byte, error) {
	data, err := SchedulerConfigFrom(cfg, path)
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	cc, _ := obj["clientConnection"].(map[string]any)
	cc["kubeconfig"] = kindSchedulerKubeconfig
	return yaml.Marshal(obj)
}

// Start implements Provider.
func (k *Kind) Start(ctx context.Context, spec Spec) (_ *Instance, retErr error) {
	began := time.Now()
	detected, err := DetectContainerRuntime()
	if err != nil {
		return nil, err
	}
	var logger log.Logger = log.NoopLogger{}
	if spec.Log != nil {
		logger = writerLogger{spec.Log}
	}
	p := cluster.NewProvider(detected, cluster.ProviderWithLogger(logger))

	name := k.ClusterName
	if name == "" {
		name = KindClusterName(spec.RunLabels[runner.RunLabelKey])
	}
	dir, err := os.MkdirTemp("", "schedq-kind-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if retErr != nil {
			os.RemoveAll(dir)
		}
	}()
	schedDir := filepath.Join(dir, "scheduler")
	if err := os.Mkdir(schedDir, 0o755); err != nil {
		return nil, err
	}
	schedCfg, err := KindSchedulerConfig(spec.Workload.SchedulerConfig, spec.Workload.SchedulerConfigPath)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(schedDir, "scheduler-config.yaml"), schedCfg, 0o644); err != nil {
		return nil, err
	}
	cfg, err := KindConfig(name, spec.FeatureGates, spec.EmulationVersion, schedDir)
	if err != nil {
		return nil, err
	}
	if hostCgroupV1() {
		cfg.KubeadmConfigPatches = append(cfg.KubeadmConfigPatches, KubeletCgroupV1Patch)
	}
	image := k.Image
	if image == "" {
		image = defaults.Image
	}
	kubeconfigPath := filepath.Join(dir, "kubeconfig")
	// kind makes a docker network for its clusters and never removes it:
	// the run removes it when the run made it and nothing else uses it.
	hadNetwork := dockerNetworkExists(ctx, kindNetwork)
	if err := p.Create(name,
		cluster.CreateWithV1Alpha4Config(cfg),
		cluster.CreateWithNodeImage(image),
		cluster.CreateWithKubeconfigPath(kubeconfigPath),
		cluster.CreateWithDisplayUsage(false),
		cluster.CreateWithDisplaySalutation(false),
		// kind deletes a cluster that failed to come up; --keep keeps it,
		// to look inside.
		cluster.CreateWithRetain(k.Keep),
	); err != nil {
		if !k.Keep {
			_ = p.Delete(name, kubeconfigPath)
			if !hadNetwork {
				_ = removeUnusedNetwork(kindNetwork)
			}
		}
		return nil, fmt.Errorf("kind create cluster %s (image %s): %w%s%s", name, image, err, kindImageAdvice(image, k.Image != "", err), commandOutput(err))
	}
	deleteCluster := func() error {
		if k.Keep {
			return nil
		}
		err := p.Delete(name, kubeconfigPath)
		if !hadNetwork {
			err = errors.Join(err, removeUnusedNetwork(kindNetwork))
		}
		return err
	}
	defer func() {
		if retErr != nil {
			_ = deleteCluster()
		}
	}()
	restCfg, err := clientcmd.BuildConfigFromFlags("", kubeconfigPath)
	if err != nil {
		return nil, err
	}
	bound.APIConfig(restCfg)
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return nil, err
	}
	if err := waitSchedulerPod(ctx, client); err != nil {
		return nil, fmt.Errorf("kind cluster %s: %w", name, err)
	}
	reader, err := NewPortForwardReader(restCfg, client)
	if err != nil {
		return nil, err
	}
	notes := []string{fmt.Sprintf("kind cluster %s, node image %s", name, image)}
	if k.Keep {
		notes = append(notes, fmt.Sprintf("the cluster is kept: kind get kubeconfig --name %s; kind delete cluster --name %s", name, name))
	}
	return &Instance{
		Cluster: runner.Cluster{
			Name:       "kind cluster " + name,
			RESTConfig: restCfg,
			Metrics:    reader,
		},
		StartDuration: time.Since(began),
		Notes:         notes,
		stop: func(context.Context) error {
			reader.Close()
			err := deleteCluster()
			return errors.Join(err, os.RemoveAll(dir))
		},
	}, nil
}

// KubeletCgroupV1Patch lets kubelet >= 1.35 start on a cgroup v1 host,
// which it refuses by default (KEP-5573).
const KubeletCgroupV1Patch = "kind: KubeletConfiguration\nfailCgroupV1: false\n"

// hostCgroupV1 says whether the container runtime's host runs cgroup v1,
// as docker (or podman) reports it.
func hostCgroupV1() bool {
	for _, bin := range []string{"docker", "podman"} {
		if _, err := exec.LookPath(bin); err != nil {
			continue
		}
		format := "{{.CgroupVersion}}"
		if bin == "podman" {
			format = "{{.Host.CgroupsVersion}}"
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		out, err := exec.CommandContext(ctx, bin, "info", "--format", format).Output()
		cancel()
		if err == nil {
			v := strings.TrimSpace(string(out))
			return v == "1" || v == "v1"
		}
	}
	return false
}

// DetectContainerRuntime returns kind's node provider for the container
// runtime that answers here, or an error wrapping ErrNoContainerRuntime
// that says why none does. A docker command without a daemon behind it
// does not count.
func DetectContainerRuntime() (cluster.ProviderOption, error) {
	detected, err := cluster.DetectNodeProvider()
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrNoContainerRuntime, err)
	}
	if _, err := exec.LookPath("docker"); err == nil {
		out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput()
		msg := strings.TrimSpace(string(out))
		if err == nil && msg != "" && !strings.Contains(msg, "Cannot connect") {
			return detected, nil
		}
		for _, other := range []string{"podman", "nerdctl"} {
			if _, err := exec.LookPath(other); err == nil {
				return detected, nil
			}
		}
		if msg == "" && err != nil {
			msg = err.Error()
		}
		return nil, fmt.Errorf("%w (docker: %s)", ErrNoContainerRuntime, lastLine(msg))
	}
	return detected, nil
}

// kindNetwork is the docker network kind puts its nodes on.
const kindNetwork = "kind"

// dockerNetworkExists says whether docker has the network; false without
// docker (podman, nerdctl), where the run leaves networks alone.
func dockerNetworkExists(ctx context.Context, name string) bool {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := exec.LookPath("docker"); err != nil {
		return true
	}
	return exec.CommandContext(ctx, "docker", "network", "inspect", name).Run() == nil
}

// removeUnusedNetwork removes the docker network when no container is on
// it (another kind cluster may have joined since).
func removeUnusedNetwork(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "network", "inspect", name, "--format", "{{len .Containers}}").Output()
	if err != nil || strings.TrimSpace(string(out)) != "0" {
		return nil
	}
	if out, err := exec.CommandContext(ctx, "docker", "network", "rm", name).CombinedOutput(); err != nil {
		return fmt.Errorf("docker network rm %s: %v: %s", name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// commandOutput is the end of the output of the command behind a kind
// error (kubeadm's, say), which kind's message leaves out.
func commandOutput(err error) string {
	rErr := kindexec.RunErrorForError(err)
	if rErr == nil || len(rErr.Output) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(rErr.Output)), "\n")
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return "; its output ends:\n  " + strings.Join(lines, "\n  ")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// waitSchedulerPod waits until the kube-scheduler pod is Ready.
func waitSchedulerPod(ctx context.Context, client kubernetes.Interface) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := client.CoreV1().Pods(metricscrape.SchedulerNamespace).List(ctx, metav1.ListOptions{LabelSelector: metricscrape.SchedulerPodSelector})
		if err != nil {
			last = err
			return false, nil
		}
		for _, p := range pods.Items {
			for _, c := range p.Status.Conditions {
				if c.Type == "Ready" && c.Status == "True" {
					return true, nil
				}
			}
		}
		last = fmt.Errorf("%d kube-scheduler pods, none Ready", len(pods.Items))
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for kube-scheduler: %w (last: %v)", err, last)
	}
	return nil
}

// writerLogger is kind's logger writing to w.
type writerLogger struct{ w io.Writer }

func (l writerLogger) Warn(message string) { fmt.Fprintln(l.w, message) }
func (l writerLogger) Warnf(format string, args ...interface{}) {
	fmt.Fprintf(l.w, format+"\n", args...)
}
func (l writerLogger) Error(message string) { fmt.Fprintln(l.w, message) }
func (l writerLogger) Errorf(format string, args ...interface{}) {
	fmt.Fprintf(l.w, format+"\n", args...)
}
func (l writerLogger) V(log.Level) log.InfoLogger { return l }
func (l writerLogger) Info(message string)        { fmt.Fprintln(l.w, message) }
func (l writerLogger) Infof(format string, args ...interface{}) {
	fmt.Fprintf(l.w, format+"\n", args...)
}
func (l writerLogger) Enabled() bool { return true }
