package embedded

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/outfile"
)

// kubeconfigName names the cluster, user and context of the kubeconfigs the
// control plane writes.
const kubeconfigName = "schedq-embedded"

// kubeconfig is a kubeconfig for one cluster, one user with a bearer token,
// and optionally the scheduler endpoint extension.
type kubeconfig struct {
	server   string
	caPEM    []byte
	user     string
	token    string
	endpoint *metricscrape.SchedulerEndpoint
}

func (k kubeconfig) write(path string) error {
	cluster := clientcmdv1.Cluster{
		Server:                   k.server,
		CertificateAuthorityData: k.caPEM,
	}
	if k.endpoint != nil {
		raw, err := json.Marshal(k.endpoint)
		if err != nil {
			return err
		}
		cluster.Extensions = []clientcmdv1.NamedExtension{{
			Name:      metricscrape.KubeconfigExtensionName,
			Extension: runtime.RawExtension{Raw: raw},
		}}
	}
	cfg := clientcmdv1.Config{
		APIVersion:     "v1",
		Kind:           "Config",
		Clusters:       []clientcmdv1.NamedCluster{{Name: kubeconfigName, Cluster: cluster}},
		AuthInfos:      []clientcmdv1.NamedAuthInfo{{Name: k.user, AuthInfo: clientcmdv1.AuthInfo{Token: k.token}}},
		Contexts:       []clientcmdv1.NamedContext{{Name: kubeconfigName, Context: clientcmdv1.Context{Cluster: kubeconfigName, AuthInfo: k.user}}},
		CurrentContext: kubeconfigName,
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	// A new file, never through a link: Stop removes it by name.
	return outfile.WriteNew(path, data, 0o600)
}
