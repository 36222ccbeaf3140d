// Package schedconfig reads what a live kube-scheduler says about its own
// configuration: the /configz answer (the KubeSchedulerConfiguration in use)
// and the /flagz answer (its command-line flags). It parses bytes and returns
// values; fetching them is the caller's.
//
// kube-scheduler v1.34 and v1.35 serve /configz as the scheduler's internal
// configuration type marshalled with encoding/json: PascalCase keys, no kind
// (but an apiVersion). v1.36 and later convert it to
// kubescheduler.config.k8s.io/v1 first: camelCase keys and a GVK. Both are
// read here, by their exact keys (encoding/json would match either case, and
// the shape is part of the answer).
package schedconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

// Shape is the form a /configz answer takes.
type Shape string

const (
	// ShapeInternal is kube-scheduler's internal configuration type, served
	// by v1.34 and v1.35: PascalCase keys, no kind (an apiVersion may be
	// there).
	ShapeInternal Shape = "internal"
	// ShapeV1 is kubescheduler.config.k8s.io/v1, served from v1.36 on.
	ShapeV1 Shape = "kubescheduler.config.k8s.io/v1"
)

const (
	// ConfigzKey is the name kube-scheduler registers its configuration
	// under: /configz answers {"componentconfig": {...}}.
	ConfigzKey = "componentconfig"

	v1APIVersion = "kubescheduler.config.k8s.io/v1"
	v1Kind       = "KubeSchedulerConfiguration"

	// DefaultPodInitialBackoffSeconds and DefaultPodMaxBackoffSeconds are
	// upstream's defaults (the queue's), which a v1 document may leave out.
	DefaultPodInitialBackoffSeconds = int64(queue.DefaultPodInitialBackoffDuration / time.Second)
	DefaultPodMaxBackoffSeconds     = int64(queue.DefaultPodMaxBackoffDuration / time.Second)
	// DefaultSchedulerName is the name of a v1 profile that gives none.
	DefaultSchedulerName = "default-scheduler"
)

// Config is the part of a KubeSchedulerConfiguration the queue depends on.
type Config struct {
	// Shape is the form the answer took, which tells v1.34/v1.35 from v1.36+.
	Shape                    Shape     `json:"shape"`
	PodInitialBackoffSeconds int64     `json:"podInitialBackoffSeconds"`
	PodMaxBackoffSeconds     int64     `json:"podMaxBackoffSeconds"`
	Profiles                 []Profile `json:"profiles"`
	// LeaderElection says whether the scheduler's replicas elect a leader,
	// and with which Lease.
	LeaderElection LeaderElection `json:"leaderElection"`
}

// LeaderElection is the part of the configuration's leaderElection that
// names the Lease the replicas of one scheduler elect their leader with.
type LeaderElection struct {
	LeaderElect       bool   `json:"leaderElect"`
	ResourceNamespace string `json:"resourceNamespace,omitempty"`
	ResourceName      string `json:"resourceName,omitempty"`
}

// Upstream's defaults of leaderElection (component-base's, set by
// kube-scheduler's v1 defaulting), which a v1 document may leave out.
const (
	DefaultLeaseNamespace = "kube-system"
	DefaultLeaseName      = "kube-scheduler"
)

// SchedulerNames are the profiles' scheduler names, in the configuration's
// order.
func (c Config) SchedulerNames() []string {
	names := make([]string, len(c.Profiles))
	for i, p := range c.Profiles {
		names[i] = p.SchedulerName
	}
	return names
}

// Profile is one scheduling profile: the scheduler name pods ask for and the
// plugins the configuration names per extension point.
type Profile struct {
	SchedulerName string `json:"schedulerName"`
	// Plugins holds the extension points whose enabled or disabled list is
	// not empty, in upstream's order (unknown ones after, by name). The lists
	// are the configuration's, not the framework's expansion: the default
	// profile enables every plugin under multiPoint and names no other point.
	Plugins []PluginSet `json:"plugins,omitempty"`
}

// PluginSet is one extension point's plugins, by name.
type PluginSet struct {
	// ExtensionPoint is spelled as in kubescheduler.config.k8s.io/v1
	// (preEnqueue, queueSort, filter, multiPoint, …) whatever the shape.
	ExtensionPoint string   `json:"extensionPoint"`
	Enabled        []string `json:"enabled,omitempty"`
	Disabled       []string `json:"disabled,omitempty"`
}

// Profile returns the profile named schedulerName.
func (c Config) Profile(schedulerName string) (Profile, bool) {
	for _, p := range c.Profiles {
		if p.SchedulerName == schedulerName {
			return p, true
		}
	}
	return Profile{}, false
}

// PluginSet returns the plugins of one extension point (v1 spelling); empty
// when the configuration names none there.
func (p Profile) PluginSet(extensionPoint string) PluginSet {
	for _, s := range p.Plugins {
		if s.ExtensionPoint == extensionPoint {
			return s
		}
	}
	return PluginSet{ExtensionPoint: extensionPoint}
}

// extensionPoints is upstream's order of the Plugins fields (v1 spelling);
// the last three arrived in v1.37.
var extensionPoints = []string{
	"preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
	"reserve", "permit", "preBind", "bind", "postBind", "multiPoint",
	"placementGenerate", "placementScore", "podGroupPostFilter",
}

// FieldError is a configz or flagz document that does not read as expected,
// with the field it is about (as spelled in the document, e.g.
// componentconfig.Profiles[0].SchedulerName).
type FieldError struct {
	Field   string
	Problem string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Problem
	}
	return e.Field + ": " + e.Problem
}

// ParseConfigz reads a kube-scheduler /configz answer in either shape. It
// also takes the configuration object alone (without the componentconfig
// wrapper), as a file would hold it.
func ParseConfigz(data []byte) (Config, error) {
	c, err := parseConfigz(data)
	if err != nil {
		return Config{}, fmt.Errorf("configz: %w", err)
	}
	return c, nil
}

func parseConfigz(data []byte) (Config, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return Config{}, &FieldError{Problem: "empty answer; /configz serves a JSON object"}
	}
	root, err := decodeObject("", data)
	if err != nil {
		return Config{}, err
	}
	if err := statusError(data); err != nil {
		return Config{}, err
	}
	cc := root
	if raw, ok := root.fields[ConfigzKey]; ok {
		if cc, err = decodeObject(ConfigzKey, raw); err != nil {
			return Config{}, err
		}
	}
	shape, err := detectShape(cc)
	if err != nil {
		return Config{}, err
	}
	k := keysFor(shape)
	c := Config{Shape: shape}
	if c.PodInitialBackoffSeconds, err = backoffField(cc, k.podInitialBackoff, shape, DefaultPodInitialBackoffSeconds); err != nil {
		return Config{}, err
	}
	if c.PodMaxBackoffSeconds, err = backoffField(cc, k.podMaxBackoff, shape, DefaultPodMaxBackoffSeconds); err != nil {
		return Config{}, err
	}
	if c.PodInitialBackoffSeconds <= 0 {
		return Config{}, &FieldError{Field: cc.path(k.podInitialBackoff), Problem: fmt.Sprintf("must be greater than 0, got %d", c.PodInitialBackoffSeconds)}
	}
	if c.PodMaxBackoffSeconds < c.PodInitialBackoffSeconds {
		return Config{}, &FieldError{Field: cc.path(k.podMaxBackoff), Problem: fmt.Sprintf("%d is less than %s %d", c.PodMaxBackoffSeconds, k.podInitialBackoff, c.PodInitialBackoffSeconds)}
	}
	if c.Profiles, err = profiles(cc, k); err != nil {
		return Config{}, err
	}
	if c.LeaderElection, err = leaderElection(cc, k); err != nil {
		return Config{}, err
	}
	return c, nil
}

// leaderElection reads leaderElection; what it leaves out takes upstream's
// defaults (leader election on, Lease kube-system/kube-scheduler).
func leaderElection(cc object, k keys) (LeaderElection, error) {
	le := LeaderElection{LeaderElect: true, ResourceNamespace: DefaultLeaseNamespace, ResourceName: DefaultLeaseName}
	raw, ok := cc.get(k.leaderElection)
	if !ok {
		return le, nil
	}
	o, err := decodeObject(cc.path(k.leaderElection), raw)
	if err != nil {
		return le, err
	}
	if v, ok := o.get(k.leaderElect); ok {
		if err := json.Unmarshal(v, &le.LeaderElect); err != nil {
			return le, &FieldError{Field: o.path(k.leaderElect), Problem: "want a boolean, got " + jsonKind(v)}
		}
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{k.resourceNamespace, &le.ResourceNamespace}, {k.resourceName, &le.ResourceName}} {
		v, ok := o.get(f.key)
		if !ok {
			continue
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return le, &FieldError{Field: o.path(f.key), Problem: "want a string, got " + jsonKind(v)}
		}
		if s != "" {
			*f.dst = s
		}
	}
	return le, nil
}

// keys are one shape's spelling of the fields read.
type keys struct {
	podInitialBackoff, podMaxBackoff, profiles, schedulerName, plugins string
	enabled, disabled, name                                            string
	leaderElection, leaderElect, resourceNamespace, resourceName       string
	// extensionPoint turns a key of Plugins into its v1 spelling.
	extensionPoint func(string) string
}

func keysFor(s Shape) keys {
	if s == ShapeInternal {
		return keys{
			podInitialBackoff: "PodInitialBackoffSeconds", podMaxBackoff: "PodMaxBackoffSeconds",
			profiles: "Profiles", schedulerName: "SchedulerName", plugins: "Plugins",
			enabled: "Enabled", disabled: "Disabled", name: "Name",
			leaderElection: "LeaderElection", leaderElect: "LeaderElect", resourceNamespace: "ResourceNamespace", resourceName: "ResourceName",
			extensionPoint: func(k string) string { return strings.ToLower(k[:1]) + k[1:] },
		}
	}
	return keys{
		podInitialBackoff: "podInitialBackoffSeconds", podMaxBackoff: "podMaxBackoffSeconds",
		profiles: "profiles", schedulerName: "schedulerName", plugins: "plugins",
		enabled: "enabled", disabled: "disabled", name: "name",
		leaderElection: "leaderElection", leaderElect: "leaderElect", resourceNamespace: "resourceNamespace", resourceName: "resourceName",
		extensionPoint: func(k string) string { return k },
	}
}

// detectShape tells the two shapes apart by the case of the keys: the
// internal type has no JSON tags, so encoding/json writes its field names.
// Its embedded TypeMeta does have tags: v1.34 and v1.35 write the apiVersion
// the defaults were decoded from (kubescheduler.config.k8s.io/v1) and no kind,
// so apiVersion alone does not tell v1 apart.
func detectShape(cc object) (Shape, error) {
	internal := keysFor(ShapeInternal)
	for _, k := range []string{internal.profiles, internal.podInitialBackoff, internal.podMaxBackoff} {
		if _, ok := cc.fields[k]; ok {
			return ShapeInternal, nil
		}
	}
	raw, hasAPIVersion := cc.fields["apiVersion"]
	if !hasAPIVersion {
		v1 := keysFor(ShapeV1)
		for _, k := range []string{v1.profiles, v1.podInitialBackoff, v1.podMaxBackoff} {
			if _, ok := cc.fields[k]; ok {
				return "", &FieldError{Field: cc.path("apiVersion"), Problem: fmt.Sprintf("missing; camelCase keys are %s's, which kube-scheduler serves with its apiVersion and kind", v1APIVersion)}
			}
		}
		where := cc.path("")
		if where == "" {
			where = "the document"
		}
		return "", &FieldError{Problem: fmt.Sprintf("%s is not a kube-scheduler configuration: no apiVersion, Profiles or PodInitialBackoffSeconds (is the URL a kube-scheduler's /configz?)", where)}
	}
	var apiVersion string
	if err := json.Unmarshal(raw, &apiVersion); err != nil {
		return "", &FieldError{Field: cc.path("apiVersion"), Problem: "want a string, got " + jsonKind(raw)}
	}
	if apiVersion != v1APIVersion {
		return "", &FieldError{Field: cc.path("apiVersion"), Problem: fmt.Sprintf("%q is not %s, the version kube-scheduler v1.36 and later serve", apiVersion, v1APIVersion)}
	}
	if kind := stringOr(cc.fields["kind"], ""); kind != v1Kind {
		return "", &FieldError{Field: cc.path("kind"), Problem: fmt.Sprintf("%q is not %s", kind, v1Kind)}
	}
	return ShapeV1, nil
}

// statusError turns a v1 Status (what the scheduler's authorizer answers
// with 403) into an error quoting it; nil for anything else.
func statusError(data []byte) error {
	var st struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
		Message    string `json:"message"`
		Reason     string `json:"reason"`
		Code       int    `json:"code"`
	}
	if json.Unmarshal(data, &st) != nil || st.Kind != "Status" || st.APIVersion != "v1" {
		return nil
	}
	return &FieldError{Problem: fmt.Sprintf("the answer is a Status, not the document asked for: %d %s: %s", st.Code, st.Reason, st.Message)}
}

// backoffField reads one of the backoff durations: required in the internal
// shape (a plain int64 there), defaulted when absent in v1 (a pointer with
// omitempty).
func backoffField(cc object, key string, shape Shape, def int64) (int64, error) {
	raw, ok := cc.get(key)
	if !ok {
		if shape == ShapeV1 {
			return def, nil
		}
		return 0, &FieldError{Field: cc.path(key), Problem: "missing; the internal configuration always has it"}
	}
	return int64Field(cc.path(key), raw)
}

func profiles(cc object, k keys) ([]Profile, error) {
	raw, ok := cc.get(k.profiles)
	if !ok {
		return nil, &FieldError{Field: cc.path(k.profiles), Problem: "missing; kube-scheduler always runs at least one profile"}
	}
	items, err := decodeArray(cc.path(k.profiles), raw)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, &FieldError{Field: cc.path(k.profiles), Problem: "empty; kube-scheduler always runs at least one profile"}
	}
	out := make([]Profile, 0, len(items))
	seen := map[string]int{}
	for i, item := range items {
		p, err := profile(fmt.Sprintf("%s[%d]", cc.path(k.profiles), i), item, k)
		if err != nil {
			return nil, err
		}
		if j, dup := seen[p.SchedulerName]; dup {
			return nil, &FieldError{Field: fmt.Sprintf("%s[%d].%s", cc.path(k.profiles), i, k.schedulerName), Problem: fmt.Sprintf("%q is also profile %d's", p.SchedulerName, j)}
		}
		seen[p.SchedulerName] = i
		out = append(out, p)
	}
	return out, nil
}

func profile(path string, raw json.RawMessage, k keys) (Profile, error) {
	o, err := decodeObject(path, raw)
	if err != nil {
		return Profile{}, err
	}
	var p Profile
	if name, ok := o.get(k.schedulerName); ok {
		if err := json.Unmarshal(name, &p.SchedulerName); err != nil {
			return Profile{}, &FieldError{Field: o.path(k.schedulerName), Problem: "want a string, got " + jsonKind(name)}
		}
	} else if k.schedulerName == "schedulerName" {
		p.SchedulerName = DefaultSchedulerName
	}
	if p.SchedulerName == "" {
		return Profile{}, &FieldError{Field: o.path(k.schedulerName), Problem: "empty; every profile names the scheduler its pods ask for"}
	}
	rawPlugins, ok := o.get(k.plugins)
	if !ok {
		return p, nil
	}
	plugins, err := decodeObject(o.path(k.plugins), rawPlugins)
	if err != nil {
		return Profile{}, err
	}
	for _, key := range plugins.keys() {
		if key == "" {
			return Profile{}, &FieldError{Field: plugins.path(key), Problem: "an extension point with no name"}
		}
		set, err := pluginSet(plugins.path(key), plugins.fields[key], k)
		if err != nil {
			return Profile{}, err
		}
		if len(set.Enabled) == 0 && len(set.Disabled) == 0 {
			continue
		}
		set.ExtensionPoint = k.extensionPoint(key)
		p.Plugins = append(p.Plugins, set)
	}
	sortExtensionPoints(p.Plugins)
	return p, nil
}

func pluginSet(path string, raw json.RawMessage, k keys) (PluginSet, error) {
	var set PluginSet
	if isNull(raw) {
		return set, nil
	}
	o, err := decodeObject(path, raw)
	if err != nil {
		return set, err
	}
	if set.Enabled, err = pluginNames(o, k.enabled, k.name); err != nil {
		return set, err
	}
	if set.Disabled, err = pluginNames(o, k.disabled, k.name); err != nil {
		return set, err
	}
	return set, nil
}

func pluginNames(set object, key, nameKey string) ([]string, error) {
	raw, ok := set.get(key)
	if !ok {
		return nil, nil
	}
	items, err := decodeArray(set.path(key), raw)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(items))
	for i, item := range items {
		path := fmt.Sprintf("%s[%d]", set.path(key), i)
		o, err := decodeObject(path, item)
		if err != nil {
			return nil, err
		}
		rawName, ok := o.get(nameKey)
		if !ok {
			return nil, &FieldError{Field: o.path(nameKey), Problem: "missing; every plugin entry names its plugin"}
		}
		var name string
		if err := json.Unmarshal(rawName, &name); err != nil {
			return nil, &FieldError{Field: o.path(nameKey), Problem: "want a string, got " + jsonKind(rawName)}
		}
		if name == "" {
			return nil, &FieldError{Field: o.path(nameKey), Problem: "empty; every plugin entry names its plugin"}
		}
		names = append(names, name)
	}
	if len(names) == 0 {
		return nil, nil
	}
	return names, nil
}

func sortExtensionPoints(sets []PluginSet) {
	rank := func(name string) int {
		for i, p := range extensionPoints {
			if p == name {
				return i
			}
		}
		return len(extensionPoints)
	}
	sort.SliceStable(sets, func(i, j int) bool {
		ri, rj := rank(sets[i].ExtensionPoint), rank(sets[j].ExtensionPoint)
		if ri != rj {
			return ri < rj
		}
		return sets[i].ExtensionPoint < sets[j].ExtensionPoint
	})
}

// object is a JSON object with the path it was found at.
type object struct {
	at     string
	fields map[string]json.RawMessage
}

func decodeObject(path string, raw []byte) (object, error) {
	o := object{at: path}
	where := path
	if where == "" {
		where = "the document"
	}
	if !json.Valid(raw) {
		err := json.Unmarshal(raw, &o.fields)
		return o, &FieldError{Problem: fmt.Sprintf("%s: not valid JSON: %v", where, err)}
	}
	if err := json.Unmarshal(raw, &o.fields); err != nil || o.fields == nil {
		return o, &FieldError{Problem: fmt.Sprintf("%s: want a JSON object, got %s", where, jsonKind(raw))}
	}
	return o, nil
}

func decodeArray(path string, raw []byte) ([]json.RawMessage, error) {
	if isNull(raw) {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, &FieldError{Field: path, Problem: "want an array, got " + jsonKind(raw)}
	}
	return items, nil
}

// get returns a field's value; a JSON null counts as absent, as
// encoding/json writes nil slices and pointers.
func (o object) get(key string) (json.RawMessage, bool) {
	raw, ok := o.fields[key]
	if !ok || isNull(raw) {
		return nil, false
	}
	return raw, true
}

func (o object) path(key string) string {
	switch {
	case o.at == "":
		return key
	case key == "":
		return o.at
	}
	return o.at + "." + key
}

func (o object) keys() []string {
	ks := make([]string, 0, len(o.fields))
	for k := range o.fields {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func int64Field(path string, raw json.RawMessage) (int64, error) {
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&n); err != nil {
		return 0, &FieldError{Field: path, Problem: "want an integer, got " + jsonKind(raw)}
	}
	v, err := n.Int64()
	if err != nil {
		return 0, &FieldError{Field: path, Problem: fmt.Sprintf("want an integer of seconds, got %s", n)}
	}
	return v, nil
}

func stringOr(raw json.RawMessage, def string) string {
	var s string
	if raw == nil || json.Unmarshal(raw, &s) != nil {
		return def
	}
	return s
}

func isNull(raw []byte) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// jsonKind names the kind of a JSON value for an error message.
func jsonKind(raw []byte) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	if (t[0] >= '0' && t[0] <= '9') || t[0] == '-' {
		return "a number"
	}
	return "something that is not JSON"
}
