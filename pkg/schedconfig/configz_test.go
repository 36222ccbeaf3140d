package schedconfig

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	internalSmall = `{"componentconfig":{"Parallelism":16,"PodInitialBackoffSeconds":2,"PodMaxBackoffSeconds":20,
"Profiles":[{"SchedulerName":"default-scheduler","Plugins":{"PreEnqueue":{"Enabled":null,"Disabled":null},
"QueueSort":{"Enabled":[{"Name":"PrioritySort","Weight":0}],"Disabled":null},
"MultiPoint":{"Enabled":[{"Name":"SchedulingGates","Weight":0},{"Name":"NodeResourcesFit","Weight":1}],"Disabled":[{"Name":"*","Weight":0}]}},
"PluginConfig":[{"Name":"NodeResourcesFit","Args":{"kind":"NodeResourcesFitArgs","apiVersion":"kubescheduler.config.k8s.io/v1","ScoringStrategy":null}}]}]}}`
	v1Small = `{"componentconfig":{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration",
"podInitialBackoffSeconds":1,"podMaxBackoffSeconds":10,
"profiles":[{"schedulerName":"default-scheduler","plugins":{"preEnqueue":{},"multiPoint":{"enabled":[{"name":"SchedulingGates","weight":0},{"name":"PrioritySort"}]},
"filter":{"disabled":[{"name":"NodePorts"}]}}},{"schedulerName":"batch","plugins":null}]}}`
)

// defaultLeaderElection is what a configuration without leaderElection
// reads as: upstream's defaults.
var defaultLeaderElection = LeaderElection{LeaderElect: true, ResourceNamespace: "kube-system", ResourceName: "kube-scheduler"}

func TestParseConfigz(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Config
	}{
		{
			name: "internal shape (v1.34, v1.35)",
			in:   internalSmall,
			want: Config{LeaderElection: defaultLeaderElection, Shape: ShapeInternal, PodInitialBackoffSeconds: 2, PodMaxBackoffSeconds: 20, Profiles: []Profile{{
				SchedulerName: "default-scheduler",
				Plugins: []PluginSet{
					{ExtensionPoint: "queueSort", Enabled: []string{"PrioritySort"}},
					{ExtensionPoint: "multiPoint", Enabled: []string{"SchedulingGates", "NodeResourcesFit"}, Disabled: []string{"*"}},
				},
			}}},
		},
		{
			name: "v1 shape (v1.36+), two profiles",
			in:   v1Small,
			want: Config{LeaderElection: defaultLeaderElection, Shape: ShapeV1, PodInitialBackoffSeconds: 1, PodMaxBackoffSeconds: 10, Profiles: []Profile{
				{SchedulerName: "default-scheduler", Plugins: []PluginSet{
					{ExtensionPoint: "filter", Disabled: []string{"NodePorts"}},
					{ExtensionPoint: "multiPoint", Enabled: []string{"SchedulingGates", "PrioritySort"}},
				}},
				{SchedulerName: "batch"},
			}},
		},
		{
			name: "v1 without the wrapper, defaults filled as upstream's defaulting does",
			in:   `{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration","profiles":[{}]}`,
			want: Config{LeaderElection: defaultLeaderElection, Shape: ShapeV1, PodInitialBackoffSeconds: 1, PodMaxBackoffSeconds: 10, Profiles: []Profile{{SchedulerName: "default-scheduler"}}},
		},
		{
			name: "internal with the apiVersion v1.34 writes, and an empty one",
			in:   `{"componentconfig":{"apiVersion":"kubescheduler.config.k8s.io/v1","PodInitialBackoffSeconds":1,"PodMaxBackoffSeconds":1,"Profiles":[{"SchedulerName":"a","Plugins":null}]}}`,
			want: Config{LeaderElection: defaultLeaderElection, Shape: ShapeInternal, PodInitialBackoffSeconds: 1, PodMaxBackoffSeconds: 1, Profiles: []Profile{{SchedulerName: "a"}}},
		},
		{
			name: "a second scheduler's Lease (v1)",
			in: `{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration","profiles":[{"schedulerName":"second"}],
"leaderElection":{"leaderElect":true,"resourceName":"second","resourceNamespace":"schedulers","leaseDuration":"15s"}}`,
			want: Config{Shape: ShapeV1, PodInitialBackoffSeconds: 1, PodMaxBackoffSeconds: 10, Profiles: []Profile{{SchedulerName: "second"}},
				LeaderElection: LeaderElection{LeaderElect: true, ResourceNamespace: "schedulers", ResourceName: "second"}},
		},
		{
			name: "no leader election, the Lease's name left to the default (internal)",
			in:   `{"componentconfig":{"PodInitialBackoffSeconds":1,"PodMaxBackoffSeconds":1,"Profiles":[{"SchedulerName":"a"}],"LeaderElection":{"LeaderElect":false,"ResourceName":""}}}`,
			want: Config{Shape: ShapeInternal, PodInitialBackoffSeconds: 1, PodMaxBackoffSeconds: 1, Profiles: []Profile{{SchedulerName: "a"}},
				LeaderElection: LeaderElection{ResourceNamespace: "kube-system", ResourceName: "kube-scheduler"}},
		},
		{
			name: "unknown extension points are kept after the known ones",
			in: `{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration","profiles":[{"plugins":{
"zeta":{"enabled":[{"name":"Z"}]},"placementScore":{"enabled":[{"name":"P"}]},"alpha":{"enabled":[{"name":"A"}]},"preEnqueue":{"enabled":[{"name":"G"}]}}}]}`,
			want: Config{LeaderElection: defaultLeaderElection, Shape: ShapeV1, PodInitialBackoffSeconds: 1, PodMaxBackoffSeconds: 10, Profiles: []Profile{{SchedulerName: "default-scheduler", Plugins: []PluginSet{
				{ExtensionPoint: "preEnqueue", Enabled: []string{"G"}},
				{ExtensionPoint: "placementScore", Enabled: []string{"P"}},
				{ExtensionPoint: "alpha", Enabled: []string{"A"}},
				{ExtensionPoint: "zeta", Enabled: []string{"Z"}},
			}}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseConfigz([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseConfigz (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestParseConfigz_errors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // the whole message
	}{
		{"empty", "", "configz: empty answer; /configz serves a JSON object"},
		{"not JSON", "Forbidden", "configz: the document: not valid JSON: invalid character 'F' looking for beginning of value"},
		{"an array", "[1]", "configz: the document: want a JSON object, got an array"},
		{"null", "null", "configz: the document: want a JSON object, got null"},
		{"wrapper not an object", `{"componentconfig":"x"}`, "configz: componentconfig: want a JSON object, got a string"},
		{"neither shape", `{"componentconfig":{"foo":1}}`,
			"configz: componentconfig is not a kube-scheduler configuration: no apiVersion, Profiles or PodInitialBackoffSeconds (is the URL a kube-scheduler's /configz?)"},
		{"a 403 Status", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden: User \"system:serviceaccount:default:nobody\" cannot get path \"/configz\"","reason":"Forbidden","details":{},"code":403}`,
			`configz: the answer is a Status, not the document asked for: 403 Forbidden: forbidden: User "system:serviceaccount:default:nobody" cannot get path "/configz"`},
		{"another component's configz", `{"kubeletconfig":{"apiVersion":"kubelet.config.k8s.io/v1beta1"}}`,
			"configz: the document is not a kube-scheduler configuration: no apiVersion, Profiles or PodInitialBackoffSeconds (is the URL a kube-scheduler's /configz?)"},
		{"old apiVersion", `{"componentconfig":{"apiVersion":"kubescheduler.config.k8s.io/v1beta3","kind":"KubeSchedulerConfiguration","profiles":[]}}`,
			`configz: componentconfig.apiVersion: "kubescheduler.config.k8s.io/v1beta3" is not kubescheduler.config.k8s.io/v1, the version kube-scheduler v1.36 and later serve`},
		{"wrong kind", `{"componentconfig":{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"Policy"}}`,
			`configz: componentconfig.kind: "Policy" is not KubeSchedulerConfiguration`},
		{"apiVersion not a string", `{"componentconfig":{"apiVersion":1}}`, "configz: componentconfig.apiVersion: want a string, got a number"},
		{"camelCase without GVK", `{"componentconfig":{"profiles":[]}}`,
			"configz: componentconfig.apiVersion: missing; camelCase keys are kubescheduler.config.k8s.io/v1's, which kube-scheduler serves with its apiVersion and kind"},
		{"internal without backoff", `{"componentconfig":{"Profiles":[{"SchedulerName":"a"}]}}`,
			"configz: componentconfig.PodInitialBackoffSeconds: missing; the internal configuration always has it"},
		{"leaderElect a string", `{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration","profiles":[{}],"leaderElection":{"leaderElect":"yes"}}`,
			"configz: leaderElection.leaderElect: want a boolean, got a string"},
		{"resourceName a number", `{"componentconfig":{"PodInitialBackoffSeconds":1,"PodMaxBackoffSeconds":1,"Profiles":[{"SchedulerName":"a"}],"LeaderElection":{"ResourceName":1}}}`,
			"configz: componentconfig.LeaderElection.ResourceName: want a string, got a number"},
		{"backoff a string", `{"componentconfig":{"PodInitialBackoffSeconds":"1s","PodMaxBackoffSeconds":10,"Profiles":[]}}`,
			"configz: componentconfig.PodInitialBackoffSeconds: want an integer, got a string"},
		{"backoff a fraction", `{"componentconfig":{"PodInitialBackoffSeconds":1.5,"PodMaxBackoffSeconds":10,"Profiles":[]}}`,
			"configz: componentconfig.PodInitialBackoffSeconds: want an integer of seconds, got 1.5"},
		{"backoff zero", `{"componentconfig":{"PodInitialBackoffSeconds":0,"PodMaxBackoffSeconds":10,"Profiles":[]}}`,
			"configz: componentconfig.PodInitialBackoffSeconds: must be greater than 0, got 0"},
		{"max below initial", `{"componentconfig":{"PodInitialBackoffSeconds":5,"PodMaxBackoffSeconds":2,"Profiles":[]}}`,
			"configz: componentconfig.PodMaxBackoffSeconds: 2 is less than PodInitialBackoffSeconds 5"},
		{"no profiles", `{"componentconfig":{"PodInitialBackoffSeconds":1,"PodMaxBackoffSeconds":10,"Profiles":null}}`,
			"configz: componentconfig.Profiles: missing; kube-scheduler always runs at least one profile"},
		{"empty profiles", `{"componentconfig":{"PodInitialBackoffSeconds":1,"PodMaxBackoffSeconds":10,"Profiles":[]}}`,
			"configz: componentconfig.Profiles: empty; kube-scheduler always runs at least one profile"},
		{"profiles an object", `{"componentconfig":{"PodInitialBackoffSeconds":1,"PodMaxBackoffSeconds":10,"Profiles":{}}}`,
			"configz: componentconfig.Profiles: want an array, got an object"},
		{"internal profile without a name", `{"componentconfig":{"PodInitialBackoffSeconds":1,"PodMaxBackoffSeconds":10,"Profiles":[{"Plugins":null}]}}`,
			"configz: componentconfig.Profiles[0].SchedulerName: empty; every profile names the scheduler its pods ask for"},
		{"two profiles, one name", `{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration","profiles":[{},{"schedulerName":"default-scheduler"}]}`,
			`configz: profiles[1].schedulerName: "default-scheduler" is also profile 0's`},
		{"plugin name a number", `{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration","profiles":[{"plugins":{"filter":{"enabled":[{"name":7}]}}}]}`,
			"configz: profiles[0].plugins.filter.enabled[0].name: want a string, got a number"},
		{"plugin without a name", `{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration","profiles":[{"plugins":{"filter":{"enabled":[{"weight":1}]}}}]}`,
			"configz: profiles[0].plugins.filter.enabled[0].name: missing; every plugin entry names its plugin"},
		{"plugin entry a string", `{"componentconfig":{"PodInitialBackoffSeconds":1,"PodMaxBackoffSeconds":10,"Profiles":[{"SchedulerName":"a","Plugins":{"Filter":{"Enabled":["NodePorts"]}}}]}}`,
			"configz: componentconfig.Profiles[0].Plugins.Filter.Enabled[0]: want a JSON object, got a string"},
		{"plugin set an array", `{"componentconfig":{"PodInitialBackoffSeconds":1,"PodMaxBackoffSeconds":10,"Profiles":[{"SchedulerName":"a","Plugins":{"Filter":[]}}]}}`,
			"configz: componentconfig.Profiles[0].Plugins.Filter: want a JSON object, got an array"},
		{"truncated", internalSmall[:len(internalSmall)/2], "configz: the document: not valid JSON: unexpected end of JSON input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfigz([]byte(tc.in))
			if err == nil {
				t.Fatalf("ParseConfigz(%q) succeeded, want %q", tc.in, tc.want)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("error\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestProfile_PluginSet(t *testing.T) {
	c, err := ParseConfigz([]byte(v1Small))
	if err != nil {
		t.Fatal(err)
	}
	p, ok := c.Profile("default-scheduler")
	if !ok {
		t.Fatal("no profile default-scheduler")
	}
	if got := p.PluginSet("filter").Disabled; !cmp.Equal(got, []string{"NodePorts"}) {
		t.Errorf("filter disabled = %v, want [NodePorts]", got)
	}
	if got := p.PluginSet("score"); got.ExtensionPoint != "score" || got.Enabled != nil || got.Disabled != nil {
		t.Errorf("score = %+v, want an empty set named score", got)
	}
	if _, ok := c.Profile("nope"); ok {
		t.Error("Profile(nope) found a profile")
	}
}
