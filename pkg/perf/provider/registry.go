package provider

import (
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// Settings are the flags of every provider, as `perf run` takes them. A
// provider reads the ones its Registration lists in Flags; setting another
// is an error (Registration.Check).
type Settings struct {
	// kind
	KindImage string `json:"kindImage,omitempty"`
	KindName  string `json:"kindName,omitempty"`
	Keep      bool   `json:"keep,omitempty"`
	// kubeconfig
	AllowExisting bool   `json:"allowExisting,omitempty"`
	Kubeconfig    string `json:"kubeconfig,omitempty"`
	Context       string `json:"context,omitempty"`
	MetricsURL    string `json:"metricsURL,omitempty"`
	// RequestTimeout bounds each call to the cluster (--request-timeout;
	// 0 is DefaultRequestTimeout).
	RequestTimeout time.Duration `json:"requestTimeout,omitempty"`
}

// The flag names of Settings' fields.
const (
	FlagKindImage     = "kind-image"
	FlagKindName      = "kind-name"
	FlagKeep          = "keep"
	FlagAllowExisting = "allow-existing-cluster"
	FlagKubeconfig    = "kubeconfig"
	FlagContext       = "context"
	FlagMetricsURL    = "metrics-url"
)

// set returns the flags s sets.
func (s Settings) set() []string {
	var out []string
	add := func(ok bool, flag string) {
		if ok {
			out = append(out, flag)
		}
	}
	add(s.KindImage != "", FlagKindImage)
	add(s.KindName != "", FlagKindName)
	add(s.Keep, FlagKeep)
	add(s.AllowExisting, FlagAllowExisting)
	add(s.Kubeconfig != "", FlagKubeconfig)
	add(s.Context != "", FlagContext)
	add(s.MetricsURL != "", FlagMetricsURL)
	return out
}

// Registration is a provider as the commands see it.
type Registration struct {
	// Name is the --cluster value.
	Name string
	// Starting is what progress prints while Start runs ("creating a kind
	// cluster").
	Starting string
	// Flags are the Settings flags the provider reads.
	Flags []string
	// FixedGates says the cluster runs with whatever gates it has, so a
	// run cannot compare a gate's settings on it.
	FixedGates bool
	// Check refuses settings the provider cannot run with, before anything
	// starts; nil accepts all.
	Check func(Settings) error
	// LeftBehind says what a run killed before its cleanup may leave, and
	// the command that removes it; nil for a cluster that dies with the
	// process.
	LeftBehind func(s Settings, runID string) string
	// New returns the provider for settings.
	New func(Settings) Provider
}

var (
	regMu sync.RWMutex
	reg   = map[string]Registration{}
)

// Register adds a provider; registering a name twice panics.
func Register(r Registration) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, ok := reg[r.Name]; ok {
		panic("provider " + r.Name + " registered twice")
	}
	reg[r.Name] = r
}

// Lookup returns the registration of name.
func Lookup(name string) (Registration, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	r, ok := reg[name]
	return r, ok
}

// Names lists the registered providers, sorted.
func Names() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	return slices.Sorted(maps.Keys(reg))
}

// Validate checks that settings suit the provider and that it can compare
// gate (empty for no comparison).
func (r Registration) Validate(s Settings, compareGate string) error {
	for _, f := range s.set() {
		if !slices.Contains(r.Flags, f) {
			return fmt.Errorf("--%s does not apply to --cluster %s (it is for --cluster %s)", f, r.Name, strings.Join(flagOwners(f), " or "))
		}
	}
	if compareGate != "" && r.FixedGates {
		return fmt.Errorf("--compare %s needs a cluster the run starts with each setting of the gate, and --cluster %s runs with the gates it has: use --cluster %s",
			compareGate, r.Name, strings.Join(gateSetters(), " or "))
	}
	if r.Check != nil {
		return r.Check(s)
	}
	return nil
}

func flagOwners(flag string) []string {
	regMu.RLock()
	defer regMu.RUnlock()
	var out []string
	for n, r := range reg {
		if slices.Contains(r.Flags, flag) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func gateSetters() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	var out []string
	for n, r := range reg {
		if !r.FixedGates {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// elsewhere are providers this binary does not carry, and the command that
// does. The version is perf/go.mod's, as the generated gates record it.
var elsewhere = map[string]struct{ binary, how string }{
	NameEmbedded: {"schedq-perf", "the embedded control plane (etcd, kube-apiserver and kube-scheduler " + workload.GatesVersion + " in one process) links Kubernetes itself and ships as schedq-perf, from this project's perf/ module: `make build-perf` builds bin/schedq-perf"},
}

// ErrUnknown is wrapped by the error Resolve returns for a name nothing
// registered.
var ErrUnknown = errors.New("unknown cluster provider")

// Resolve returns name's registration. For a provider another binary
// carries it returns delegate, the binary to run instead when it is on
// PATH, and otherwise an error that says how to get it.
func Resolve(name string) (r Registration, delegate string, err error) {
	if r, ok := Lookup(name); ok {
		return r, "", nil
	}
	if e, ok := elsewhere[name]; ok {
		if path, err := exec.LookPath(e.binary); err == nil {
			return Registration{}, path, nil
		}
		return Registration{}, "", fmt.Errorf("--cluster %s is not in this binary: %s; then run `%s run …`, or put it on PATH and this command runs it", name, e.how, e.binary)
	}
	return Registration{}, "", fmt.Errorf("%w %q: want one of %s", ErrUnknown, name, strings.Join(Choices(), ", "))
}

// Choices are the --cluster values: the providers registered here and
// those another binary carries, sorted.
func Choices() []string {
	names := Names()
	for n := range elsewhere {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}
