package metricscrape

// Talos finds Talos Linux's scheduler: the static pod kube-scheduler in
// kube-system that Talos labels k8s-app=kube-scheduler (beside
// component=kube-scheduler and app.kubernetes.io/managed-by=Talos; siderolabs/talos
// control_plane_static_pod.go), bound to 127.0.0.1:10259, with kubeadm's
// Lease.
var Talos Locator = &PodLocator{Name: "Talos", Pods: TalosSchedulerPods}

// TalosSchedulerPods is where Talos runs the scheduler.
var TalosSchedulerPods = SchedulerPods{
	Namespace: SchedulerNamespace, Selector: "k8s-app=kube-scheduler",
	LeaseNamespace: SchedulerNamespace, LeaseName: SchedulerLeaseName, Port: SchedulerSecurePort,
}
