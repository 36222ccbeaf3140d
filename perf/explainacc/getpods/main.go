// Command getpods does what `kubectl get pods -A -o json` does, with
// client-go alone: list every pod in pages of 500 (kubectl's default
// --chunk-size) and print them as one v1 List in kubectl's JSON. It stands in
// for kubectl where no kubectl binary can be built.
//
// With -list it is a plain client-go list: the same pages, client-go's
// default (JSON) encoding, nothing printed but the count of pods, the
// least any client-go program that reads every pod takes. -protobuf asks for
// protobuf, and -qps and -burst change client-go's request limits (5 and
// 10), as explain does (50 and 300).
package main

import (
	"context"
	"encoding/json"
	"flag"
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
	listOnly := flag.Bool("list", false, "list the pods and print their count only (a plain client-go list)")
	protobuf := flag.Bool("protobuf", false, "ask for protobuf rather than client-go's default JSON")
	qps := flag.Float64("qps", 0, "requests per second the client allows (0: client-go's default, 5)")
	burst := flag.Int("burst", 0, "requests the client allows at once (0: client-go's default, 10)")
	flag.Parse()
	cfg, err := genericclioptions.NewConfigFlags(true).ToRESTConfig()
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(*qps), *burst
	if *protobuf {
		cfg.ContentType = runtime.ContentTypeProtobuf
		cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	list := &corev1.List{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"}}
	opts := metav1.ListOptions{Limit: 500}
	count := 0
	for {
		page, err := client.CoreV1().Pods(metav1.NamespaceAll).List(context.Background(), opts)
		if err != nil {
			return err
		}
		count += len(page.Items)
		for i := 0; i < len(page.Items) && !*listOnly; i++ {
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
	if *listOnly {
		_, err := fmt.Println(count)
		return err
	}
	return (&printers.JSONPrinter{}).PrintObj(list, os.Stdout)
}
