package embedded

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	resourcealpha "k8s.io/api/resource/v1alpha3"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	schedulingapi "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/pkg/features"

	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/server/flagz"
	"k8s.io/client-go/rest"

	"k8s.io/kubernetes/cmd/kube-apiserver/app"
	"k8s.io/kubernetes/cmd/kube-apiserver/app/options"
)

// apiserverFlags are kube-apiserver's flags for the embedded control plane,
// besides the file paths and ports that change per start and the
// authorization modes (defaultAuthorizationModes unless Options say).
//
//   - ServiceAccount admission is off: no controller creates the default
//     service account. TaintNodesByCondition is off: it taints every new Node
//     not-ready and nothing here removes the taint. Priority is off, as in
//     scheduler_perf, so workloads may set spec.priority directly.
//   - No endpoint reconciler: there is no kubernetes Service to keep.
var apiserverFlags = []string{
	"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition,Priority",
	"--endpoint-reconciler-type=none",
	"--service-cluster-ip-range=10.0.0.0/16",
	"--service-account-issuer=https://kubernetes.default.svc",
	"--allow-privileged=true",
}

// defaultAuthorizationModes turn RBAC on, as in kubeadm clusters, so that
// read-only identities and a /metrics 403 behave as they do in real clusters.
var defaultAuthorizationModes = []string{"Node", "RBAC"}

// runtimeConfig is upstream's scheduler_perf rule (mustSetupCluster,
// util.go v1.37.2) for the API versions a workload's gates need beyond the
// default ones: DRA's older resource.k8s.io versions when it turns
// DynamicResourceAllocation on, and scheduling.k8s.io/v1beta1 (PodGroup)
// when it turns GenericWorkload on.
func runtimeConfig(gates map[string]bool) []string {
	var out []string
	if gates[string(features.DynamicResourceAllocation)] {
		for _, gv := range []schema.GroupVersion{resourceapi.SchemeGroupVersion, resourcev1beta2.SchemeGroupVersion, resourcev1beta1.SchemeGroupVersion, resourcealpha.SchemeGroupVersion} {
			out = append(out, gv.String()+"=true")
		}
	}
	if gates[string(features.GenericWorkload)] {
		out = append(out, schedulingapi.SchemeGroupVersion.String()+"=true")
	}
	return out
}

// apiserver is a running kube-apiserver.
type apiserver struct {
	url    string
	cancel context.CancelFunc
	done   chan struct{} // closed when Run has returned
	err    error         // Run's error, once done is closed
}

// startAPIServer builds kube-apiserver through its own options, config and
// server chain (what `kube-apiserver` does after parsing its flags) and runs
// it on a loopback listener. It returns once the server is started; the
// caller waits for /readyz.
func startAPIServer(etcdURL string, f *files, authorizationModes, runtimeConfig []string) (*apiserver, error) {
	s := options.NewServerRunOptions()
	fs := pflag.NewFlagSet("kube-apiserver", pflag.ContinueOnError)
	namedFlagSets := s.Flags()
	for _, set := range namedFlagSets.FlagSets {
		fs.AddFlagSet(set)
	}
	// /flagz, as the kube-apiserver command serves it.
	s.Flagz = flagz.NamedFlagSetsReader{FlagSets: namedFlagSets}
	if len(authorizationModes) == 0 {
		authorizationModes = defaultAuthorizationModes
	}
	args := append([]string{
		"--etcd-servers=" + etcdURL,
		"--tls-cert-file=" + f.apiserverCert,
		"--tls-private-key-file=" + f.apiserverKey,
		"--client-ca-file=" + f.caCert,
		"--token-auth-file=" + f.tokens,
		"--service-account-key-file=" + f.saKey,
		"--service-account-signing-key-file=" + f.saKey,
		"--authorization-mode=" + strings.Join(authorizationModes, ","),
	}, apiserverFlags...)
	if len(runtimeConfig) > 0 {
		args = append(args, "--runtime-config="+strings.Join(runtimeConfig, ","))
	}
	if f.frontProxyCA != "" {
		// kubeadm's flags for aggregated API servers.
		args = append(args,
			"--requestheader-client-ca-file="+f.frontProxyCA,
			"--requestheader-allowed-names="+FrontProxyClientName,
			"--requestheader-username-headers=X-Remote-User",
			"--requestheader-group-headers=X-Remote-Group",
			"--requestheader-extra-headers-prefix=X-Remote-Extra-",
			"--proxy-client-cert-file="+f.frontProxyCert,
			"--proxy-client-key-file="+f.frontProxyKey)
	}
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("kube-apiserver flags: %w", err)
	}
	// What the command's PersistentPreRunE does: settle the effective version
	// and feature gates before anything reads them.
	if err := s.GenericServerRunOptions.ComponentGlobalsRegistry.Set(); err != nil {
		return nil, fmt.Errorf("kube-apiserver: %w", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	s.SecureServing.Listener = ln
	s.SecureServing.BindPort = port
	s.SecureServing.BindAddress = net.IPv4(127, 0, 0, 1)
	s.SecureServing.ExternalAddress = net.IPv4(127, 0, 0, 1)

	ctx, cancel := context.WithCancel(context.Background())
	fail := func(err error) (*apiserver, error) {
		cancel()
		ln.Close()
		return nil, fmt.Errorf("kube-apiserver: %w", err)
	}
	completed, err := s.Complete(ctx)
	if err != nil {
		return fail(err)
	}
	if errs := completed.Validate(); len(errs) != 0 {
		return fail(utilerrors.NewAggregate(errs))
	}
	config, err := app.NewConfig(completed)
	if err != nil {
		return fail(err)
	}
	cc, err := config.Complete()
	if err != nil {
		return fail(err)
	}
	server, err := app.CreateServerChain(cc)
	if err != nil {
		return fail(err)
	}
	prepared, err := server.PrepareRun()
	if err != nil {
		return fail(err)
	}

	a := &apiserver{
		url:    "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		cancel: cancel,
		done:   make(chan struct{}),
	}
	go func() {
		defer close(a.done)
		a.err = prepared.Run(ctx)
	}()
	return a, nil
}

// stop shuts kube-apiserver down and waits until it has.
func (a *apiserver) stop() error {
	a.cancel()
	<-a.done
	if a.err != nil && !errors.Is(a.err, context.Canceled) {
		return fmt.Errorf("kube-apiserver: %w", a.err)
	}
	return nil
}

// tokenConfig is a client of the apiserver at url with a bearer token,
// verifying the server against caPEM.
func tokenConfig(url, token string, caPEM []byte) *rest.Config {
	return &rest.Config{
		Host:            url,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: caPEM},
	}
}
