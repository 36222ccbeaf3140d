package explainacc

import "k8s.io/component-base/metrics"

// apiserverFamilies are kube-apiserver's and etcd's largest metric families
// in v1.36.3, 1.5 MB of the 1.7 MB the embedded control plane's scheduler
// serves on /metrics: its kube-apiserver and kube-scheduler share one
// process, so one registry. A real kube-scheduler serves its own series
// only (tens of kilobytes); hiding these before the control plane starts
// (metrics are hidden when they are registered, as --disabled-metrics does)
// gives explain a scrape of that size to read.
var apiserverFamilies = []string{
	"etcd_request_duration_seconds",
	"etcd_requests_total",
	"apiserver_request_duration_seconds",
	"apiserver_request_slo_duration_seconds",
	"apiserver_request_sli_duration_seconds",
	"apiserver_request_total",
	"apiserver_request_body_size_bytes",
	"apiserver_request_filter_duration_seconds",
	"apiserver_response_sizes",
	"apiserver_longrunning_requests",
	"apiserver_selfrequest_total",
	"apiserver_watch_list_duration_seconds",
	"apiserver_watch_events_sizes",
	"apiserver_watch_events_total",
	"apiserver_watch_cache_read_wait_seconds",
	"apiserver_watch_cache_initializations_total",
	"apiserver_watch_cache_resource_version",
	"apiserver_watch_cache_events_dispatched_total",
	"watch_cache_capacity",
	"apiserver_admission_controller_admission_duration_seconds",
	"apiserver_admission_step_admission_duration_seconds",
	"apiserver_flowcontrol_priority_level_request_utilization",
	"apiserver_flowcontrol_priority_level_seat_utilization",
	"apiserver_flowcontrol_demand_seats",
	"apiserver_flowcontrol_read_vs_write_current_requests",
	"apiserver_flowcontrol_request_execution_seconds",
	"apiserver_storage_list_evaluated_objects_total",
	"apiserver_storage_list_returned_objects_total",
	"apiserver_storage_list_fetched_objects_total",
	"apiserver_storage_list_total",
	"apiserver_storage_objects",
	"apiserver_resource_size_estimate_bytes",
	"apiserver_resource_objects",
}

// hideAPIServerMetrics must run before the control plane starts.
func hideAPIServerMetrics() { metrics.SetDisabledMetrics(apiserverFamilies) }
