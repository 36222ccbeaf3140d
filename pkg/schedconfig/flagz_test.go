package schedconfig

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// flagzText renders a text page as upstream does, with one separator.
func flagzText(header, sep string, flags ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s\nWarning: This endpoint is not meant to be machine parseable, has no formatting compatibility guarantees and is for debugging purposes only.\n\n", header)
	for i := 0; i+1 < len(flags); i += 2 {
		fmt.Fprintf(&b, "%s%s%s\n", flags[i], sep, flags[i+1])
	}
	return b.String()
}

func TestParseFlagz_text(t *testing.T) {
	flags := []string{
		"authorization-always-allow-paths", "[/healthz,/readyz,/livez]",
		"bind-address", "0.0.0.0",
		"feature-gates", ":ComponentFlagz=true",
		"kube-api-content-type", "application/vnd.kubernetes.protobuf",
		"pod-max-in-unschedulable-pods-duration", "5m0s",
		"tls-private-key-file", "",
		"vmodule", "",
	}
	want := map[string]string{}
	for i := 0; i < len(flags); i += 2 {
		want[flags[i]] = flags[i+1]
	}
	for _, header := range []string{"kube-scheduler flags", "kube-scheduler flagz"} {
		for _, sep := range []string{":", ": ", "=", " "} {
			t.Run(fmt.Sprintf("%s separator %q", header, sep), func(t *testing.T) {
				got, err := ParseFlagz([]byte(flagzText(header, sep, flags...)), "text/plain; charset=utf-8")
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(Flags{Format: FlagzText, Component: "kube-scheduler", Values: want}, got); diff != "" {
					t.Errorf("(-want, +got):\n%s", diff)
				}
			})
		}
	}
}

func TestParseFlagz_json(t *testing.T) {
	tests := []struct {
		name, in, contentType string
		want                  Flags
	}{
		{
			name:        "v1beta1",
			in:          `{"kind":"Flagz","apiVersion":"config.k8s.io/v1beta1","metadata":{"name":"kube-scheduler"},"flags":{"v":"2","feature-gates":""}}`,
			contentType: "application/json",
			want:        Flags{Format: FlagzV1beta1, Component: "kube-scheduler", Values: map[string]string{"v": "2", "feature-gates": ""}},
		},
		{
			name:        "v1alpha1, content type sniffed",
			in:          "\n  {\"kind\":\"Flagz\",\"apiVersion\":\"config.k8s.io/v1alpha1\",\"metadata\":{\"name\":\"kube-scheduler\"}}",
			contentType: "",
			want:        Flags{Format: FlagzV1alpha1, Component: "kube-scheduler", Values: map[string]string{}},
		},
		{
			name:        "text sniffed",
			in:          flagzText("kube-scheduler flagz", "=", "v", "0"),
			contentType: "",
			want:        Flags{Format: FlagzText, Component: "kube-scheduler", Values: map[string]string{"v": "0"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseFlagz([]byte(tc.in), tc.contentType)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want, +got):\n%s", diff)
			}
		})
	}
}

func TestParseFlagz_errors(t *testing.T) {
	tests := []struct {
		name, in, contentType, want string
	}{
		{"empty text", "\n\n", "text/plain", "flagz: empty answer; /flagz starts with a line naming the component"},
		{"a 404 page", "404 page not found\n", "text/plain; charset=utf-8", `flagz: line 1: "404 page not found" is not the header "<component> flagz" (is the URL a /flagz page?)`},
		{"no separator", flagzText("kube-scheduler flags", "=", "v", "1") + "bare\n", "text/plain", "flagz: a flag line has no separator after the flag name"},
		{"mixed separators", flagzText("kube-scheduler flags", "=", "v", "1") + "w:2\n", "text/plain", `flagz: the flag lines do not share one separator (":", ": ", "=" or " ")`},
		{"not a separator", "\nkube-scheduler flags\nv|1\n", "text/plain", `flagz: "|" is not a flagz separator (":", ": ", "=" or " ")`},
		{"a line without a name", "kube-scheduler flags\n=1\n", "text/plain", `flagz: line 2: "=1" does not start with a flag name`},
		{"duplicate", "kube-scheduler flags\nv=1\nv=2\n", "text/plain", "flagz: line 3: flag v appears twice"},
		{"yaml", "kind: Flagz", "application/yaml", "flagz: Content-Type: application/yaml is not read; ask with Accept: " + FlagzAccept},
		{"bad content type", "{}", "application/json;;", `flagz: Content-Type: "application/json;;": mime: invalid media parameter`},
		{"json not an object", "[]", "application/json", "flagz: the document: want a JSON object, got an array"},
		{"json truncated", `{"kind":"Flagz"`, "application/json", "flagz: the document: not valid JSON: unexpected end of JSON input"},
		{"a Status", `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"forbidden: User \"system:anonymous\" cannot get path \"/flagz\"","reason":"Forbidden","code":403}`, "application/json",
			`flagz: the answer is a Status, not the document asked for: 403 Forbidden: forbidden: User "system:anonymous" cannot get path "/flagz"`},
		{"another kind of v1", `{"kind":"Pod","apiVersion":"v1"}`, "application/json", `flagz: apiVersion: "v1" is neither config.k8s.io/v1beta1 nor config.k8s.io/v1alpha1`},
		{"wrong kind", `{"kind":"Statusz","apiVersion":"config.k8s.io/v1beta1"}`, "application/json", `flagz: kind: "Statusz" is not Flagz`},
		{"flag not a string", `{"kind":"Flagz","apiVersion":"config.k8s.io/v1beta1","flags":{"v":2}}`, "application/json", "flagz: flags.v: want a string, got a number"},
		{"flags an array", `{"kind":"Flagz","apiVersion":"config.k8s.io/v1beta1","flags":[]}`, "application/json", "flagz: flags: want a JSON object, got an array"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFlagz([]byte(tc.in), tc.contentType)
			if err == nil {
				t.Fatalf("ParseFlagz succeeded, want %q", tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got %q\nwant %q", err.Error(), tc.want)
			}
		})
	}
}

func TestFlags_PodMaxInUnschedulablePodsDuration(t *testing.T) {
	tests := []struct {
		name    string
		values  map[string]string
		want    time.Duration
		wantOK  bool
		wantErr string
	}{
		{"default", map[string]string{PodMaxInUnschedulablePodsDurationFlag: "5m0s"}, 5 * time.Minute, true, ""},
		{"set", map[string]string{PodMaxInUnschedulablePodsDurationFlag: "1m30s"}, 90 * time.Second, true, ""},
		{"absent", map[string]string{"v": "0"}, 0, false, ""},
		{"not a duration", map[string]string{PodMaxInUnschedulablePodsDurationFlag: "CLASSIFIED"}, 0, true,
			`flag pod-max-in-unschedulable-pods-duration: want a positive duration such as 5m0s, got "CLASSIFIED"`},
		{"zero", map[string]string{PodMaxInUnschedulablePodsDurationFlag: "0s"}, 0, true,
			`flag pod-max-in-unschedulable-pods-duration: want a positive duration such as 5m0s, got "0s"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := Flags{Values: tc.values}.PodMaxInUnschedulablePodsDuration()
			if gotErr := fmt.Sprint(err); tc.wantErr != "" && gotErr != tc.wantErr || tc.wantErr == "" && err != nil {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("got %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestFlags_FeatureGates(t *testing.T) {
	tests := []struct {
		name    string
		value   string
		absent  bool
		want    map[string]bool
		wantErr string
	}{
		{name: "absent", absent: true, want: map[string]bool{}},
		{name: "empty", value: "", want: map[string]bool{}},
		{name: "default component, as v1.34+ print it", value: ":ComponentFlagz=true", want: map[string]bool{"ComponentFlagz": true}},
		{name: "kube component and another's", value: ":A=true,kube:B=false,wardle:C=true", want: map[string]bool{"A": true, "B": false}},
		{name: "plain featuregate string", value: "A=true,B=false", want: map[string]bool{"A": true, "B": false}},
		{name: "spaces", value: " kube: A = true , ", want: map[string]bool{"A": true}},
		{name: "not a bool", value: ":A=yes", wantErr: `flag feature-gates: gate A: want true or false, got "yes"`},
		{name: "no value", value: "kube:A", wantErr: `flag feature-gates: "A" is not Gate=true|false`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := Flags{Values: map[string]string{}}
			if !tc.absent {
				f.Values[FeatureGatesFlag] = tc.value
			}
			got, err := f.FeatureGates()
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want, +got):\n%s", diff)
			}
		})
	}
}
