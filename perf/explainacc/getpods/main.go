// Command getpods does what `kubectl get pods -A -o json` does, with
// client-go alone: list every pod in pages of 500 (kubectl's default
// --chunk-size) and print them as one v1 List in kubectl's JSON. It stands in
// for kubectl where no kubectl binary can be built.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/kubernetes"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := genericclioptions.NewConfigFlags(true).ToRESTConfig()
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	list := &corev1.List{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"}}
	opts := metav1.ListOptions{Limit: 500}
	for {
		page, err := client.CoreV1().Pods(metav1.NamespaceAll).List(context.Background(), opts)
		if err != nil {
			return err
		}
		for i := range page.Items {
			p := &page.Items[i]
			p.APIVersion, p.Kind = "v1", "Pod"
			raw, err := json.Marshal(p)
			if err != nil {
				return err
			}
			list.Items = append(list.Items, runtime.RawExtension{Raw: raw})
		}
		if page.Continue == "" {
			break
		}
		opts.Continue = page.Continue
	}
	return (&printers.JSONPrinter{}).PrintObj(list, os.Stdout)
}
