package cmd

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
)

// registerCompletions completes the values of kubectl's global flags that
// name something in the kubeconfig or the cluster: --context, --cluster,
// --user and -n.
func registerCompletions(root *cobra.Command, getter genericclioptions.RESTClientGetter) {
	fromKubeconfig := func(names func(ctx, cluster, user map[string]bool) map[string]bool) cobra.CompletionFunc {
		return func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			raw, err := getter.ToRawKubeConfigLoader().RawConfig()
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			ctxs, clusters, users := map[string]bool{}, map[string]bool{}, map[string]bool{}
			for n := range raw.Contexts {
				ctxs[n] = true
			}
			for n := range raw.Clusters {
				clusters[n] = true
			}
			for n := range raw.AuthInfos {
				users[n] = true
			}
			return withPrefix(names(ctxs, clusters, users), toComplete, nil), cobra.ShellCompDirectiveNoFileComp
		}
	}
	for flag, pick := range map[string]func(ctx, cluster, user map[string]bool) map[string]bool{
		"context": func(c, _, _ map[string]bool) map[string]bool { return c },
		"cluster": func(_, c, _ map[string]bool) map[string]bool { return c },
		"user":    func(_, _, u map[string]bool) map[string]bool { return u },
	} {
		_ = root.RegisterFlagCompletionFunc(flag, fromKubeconfig(pick))
	}
	_ = root.RegisterFlagCompletionFunc("namespace", func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		names := map[string]bool{}
		_ = withClient(cmd, getter, func(ctx context.Context, client kubernetes.Interface) error {
			l, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			for _, ns := range l.Items {
				names[ns.Name] = true
			}
			return nil
		})
		return withPrefix(names, toComplete, nil), cobra.ShellCompDirectiveNoFileComp
	})
}

// completePodNames completes explain's arguments with the pending pods of
// the namespace, never with local files.
func completePodNames(getter genericclioptions.RESTClientGetter) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if all, _ := cmd.Flags().GetBool("all-namespaces"); all {
			return nil, cobra.ShellCompDirectiveNoFileComp // names and -A do not go together
		}
		ns, _, err := getter.ToRawKubeConfigLoader().Namespace()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names map[string]bool
		_ = withClient(cmd, getter, func(ctx context.Context, client kubernetes.Interface) error {
			names, err = pendingPodNames(ctx, client, ns)
			return err
		})
		return withPrefix(names, toComplete, args), cobra.ShellCompDirectiveNoFileComp
	}
}

// pendingPodNames are the names of the pods of ns that no node holds yet.
func pendingPodNames(ctx context.Context, client kubernetes.Interface, ns string) (map[string]bool, error) {
	l, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", "").String()})
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, p := range l.Items {
		if p.Status.Phase == corev1.PodPending || p.Status.Phase == "" {
			names[p.Name] = true
		}
	}
	return names, nil
}

// completionTimeout bounds a completion's calls unless --request-timeout
// is given: a shell waits on them at every Tab, and kubectl's own
// completion gives its calls 5s.
var completionTimeout = 5 * time.Second

// withClient runs f with a client and completion's bound.
func withClient(cmd *cobra.Command, getter genericclioptions.RESTClientGetter, f func(context.Context, kubernetes.Interface) error) error {
	bound, err := requestTimeout(cmd, getter)
	if err != nil {
		return err
	}
	if fl := cmd.Flags().Lookup("request-timeout"); fl == nil || !fl.Changed {
		bound = min(bound, completionTimeout)
	}
	cfg, err := restConfig(getter, "")
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	return f(ctx, client)
}

// withPrefix returns the names that start with prefix and are not in
// given, sorted.
func withPrefix(names map[string]bool, prefix string, given []string) []string {
	skip := map[string]bool{}
	for _, g := range given {
		skip[g] = true
	}
	var out []string
	for n := range names {
		if strings.HasPrefix(n, prefix) && !skip[n] {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// completeOutput completes -o with the formats a command takes.
func completeOutput(formats []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, f := range formats {
			f, _, _ = strings.Cut(f, "=")
			if _, isTemplate := map[string]bool{"jsonpath": true, "jsonpath-file": true, "jsonpath-as-json": true, "go-template": true, "go-template-file": true, "templatefile": true, "template": true, "custom-columns": true}[f]; isTemplate {
				f += "="
			}
			if strings.HasPrefix(f, toComplete) {
				out = append(out, f)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
