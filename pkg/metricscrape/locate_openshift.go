package metricscrape

// OpenShift finds OpenShift 4's scheduler: static pods
// openshift-kube-scheduler-<node> in namespace openshift-kube-scheduler,
// labelled app=openshift-kube-scheduler and scheduler=true, serving HTTPS
// on 10259, electing their leader with Lease
// openshift-kube-scheduler/kube-scheduler (the operator's
// KubeSchedulerConfiguration sets leaderElection.resourceNamespace;
// openshift/cluster-kube-scheduler-operator bindata/assets).
var OpenShift Locator = &PodLocator{Name: "OpenShift", Pods: OpenShiftSchedulerPods}

// OpenShiftSchedulerNamespace is where OpenShift runs kube-scheduler.
const OpenShiftSchedulerNamespace = "openshift-kube-scheduler"

// OpenShiftSchedulerPods is where OpenShift runs the scheduler. The
// namespace also holds installer, pruner and guard pods, so only the label
// selects.
var OpenShiftSchedulerPods = SchedulerPods{
	Namespace: OpenShiftSchedulerNamespace, Selector: "app=openshift-kube-scheduler",
	LeaseNamespace: OpenShiftSchedulerNamespace, LeaseName: SchedulerLeaseName, Port: SchedulerSecurePort,
}
