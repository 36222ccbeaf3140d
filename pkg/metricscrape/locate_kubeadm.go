package metricscrape

// Kubeadm finds kubeadm's (and kind's) scheduler: static pods
// kube-scheduler-<node> in kube-system labelled component=kube-scheduler,
// the holder of Lease kube-system/kube-scheduler among several. It comes
// after the platforms that run the same shape with their own marks (RKE2,
// Talos), and takes pods named kube-scheduler-* when none is labelled.
var Kubeadm Locator = &PodLocator{Name: "kubeadm", Pods: KubeadmSchedulerPods}
