package schedconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// FlagzFormat is the form a /flagz answer takes.
type FlagzFormat string

const (
	// FlagzText is the plain-text page: v1.34's only form (behind the alpha
	// gate ComponentFlagz), and what later versions serve without an Accept
	// header. Upstream picks a random separator per process so that it is
	// not scraped; it is read here anyway, as the only source on v1.34.
	FlagzText FlagzFormat = "text"
	// FlagzV1alpha1 is config.k8s.io/v1alpha1 Flagz: v1.35 (alpha gate), and
	// deprecated from v1.36.
	FlagzV1alpha1 FlagzFormat = "config.k8s.io/v1alpha1"
	// FlagzV1beta1 is config.k8s.io/v1beta1 Flagz, served by default from
	// v1.36.
	FlagzV1beta1 FlagzFormat = "config.k8s.io/v1beta1"
)

const (
	// FlagzAccept is one Accept header that gets each version's best
	// answer: v1beta1 from v1.36 on, v1alpha1 from v1.35 (which answers 406
	// to v1beta1 alone), text from v1.34 (406 to any JSON alone).
	FlagzAccept = "application/json;as=Flagz;v=v1beta1;g=config.k8s.io, " +
		"application/json;as=Flagz;v=v1alpha1;g=config.k8s.io;q=0.9, text/plain;q=0.5"

	// PodMaxInUnschedulablePodsDurationFlag is kube-scheduler's deprecated
	// flag for the leftover flush's age (queue.DefaultPodMaxInUnschedulablePodsDuration
	// by default); no configuration field carries it, so only /flagz shows it.
	PodMaxInUnschedulablePodsDurationFlag = "pod-max-in-unschedulable-pods-duration"
	// FeatureGatesFlag is kube-scheduler's --feature-gates.
	FeatureGatesFlag = "feature-gates"

	// classified is what /flagz shows for a flag whose value it hides.
	classified = "CLASSIFIED"
)

// Flags is a /flagz answer.
type Flags struct {
	Format FlagzFormat `json:"format"`
	// Component is the name the answer gives (kube-scheduler).
	Component string `json:"component,omitempty"`
	// Values holds every flag by name, as its String() prints it; flags
	// not set on the command line show their defaults.
	Values map[string]string `json:"values"`
}

// PodMaxInUnschedulablePodsDuration returns the value of
// --pod-max-in-unschedulable-pods-duration; ok is false when the answer has
// no such flag.
func (f Flags) PodMaxInUnschedulablePodsDuration() (d time.Duration, ok bool, err error) {
	v, ok := f.Values[PodMaxInUnschedulablePodsDurationFlag]
	if !ok {
		return 0, false, nil
	}
	d, err = time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, true, &FieldError{Field: "flag " + PodMaxInUnschedulablePodsDurationFlag, Problem: fmt.Sprintf("want a positive duration such as 5m0s, got %q", v)}
	}
	return d, true, nil
}

// FeatureGates returns the gates --feature-gates sets for kube-scheduler
// (those of the "kube" component, which is also the one a pair without a
// component names): only what was set, not the defaults. Empty when the flag
// is absent or empty.
func (f Flags) FeatureGates() (map[string]bool, error) {
	gates := map[string]bool{}
	v := f.Values[FeatureGatesFlag]
	for _, pair := range strings.Split(v, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		// From v1.34 the flag is a component:key=value multimap and prints a
		// pair without a component as ":key=value".
		if component, rest, ok := strings.Cut(pair, ":"); ok && !strings.Contains(component, "=") {
			if component = strings.TrimSpace(component); component != "" && component != "kube" {
				continue
			}
			pair = strings.TrimSpace(rest)
		}
		name, value, ok := strings.Cut(pair, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, &FieldError{Field: "flag " + FeatureGatesFlag, Problem: fmt.Sprintf("%q is not Gate=true|false", pair)}
		}
		on, err := strconv.ParseBool(strings.TrimSpace(value))
		if err != nil {
			return nil, &FieldError{Field: "flag " + FeatureGatesFlag, Problem: fmt.Sprintf("gate %s: want true or false, got %q", name, value)}
		}
		gates[name] = on
	}
	return gates, nil
}

// ParseFlagz reads a kube-scheduler /flagz answer; contentType is the
// answer's Content-Type header (text/plain or application/json). An empty
// contentType reads a body that starts with "{" as JSON, anything else as
// text.
func ParseFlagz(data []byte, contentType string) (Flags, error) {
	f, err := parseFlagz(data, contentType)
	if err != nil {
		return Flags{}, fmt.Errorf("flagz: %w", err)
	}
	return f, nil
}

func parseFlagz(data []byte, contentType string) (Flags, error) {
	mediaType := ""
	if strings.TrimSpace(contentType) != "" {
		mt, _, err := mime.ParseMediaType(contentType)
		if err != nil {
			return Flags{}, &FieldError{Field: "Content-Type", Problem: fmt.Sprintf("%q: %v", contentType, err)}
		}
		mediaType = mt
	} else if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		mediaType = "application/json"
	} else {
		mediaType = "text/plain"
	}
	switch mediaType {
	case "application/json":
		return parseFlagzJSON(data)
	case "text/plain":
		return parseFlagzText(data)
	}
	return Flags{}, &FieldError{Field: "Content-Type", Problem: fmt.Sprintf("%s is not read; ask with Accept: %s", mediaType, FlagzAccept)}
}

func parseFlagzJSON(data []byte) (Flags, error) {
	o, err := decodeObject("", data)
	if err != nil {
		return Flags{}, err
	}
	if err := statusError(data); err != nil {
		return Flags{}, err
	}
	f := Flags{}
	switch apiVersion := stringOr(o.fields["apiVersion"], ""); apiVersion {
	case string(FlagzV1alpha1), string(FlagzV1beta1):
		f.Format = FlagzFormat(apiVersion)
	default:
		return Flags{}, &FieldError{Field: "apiVersion", Problem: fmt.Sprintf("%q is neither %s nor %s", apiVersion, FlagzV1beta1, FlagzV1alpha1)}
	}
	if kind := stringOr(o.fields["kind"], ""); kind != "Flagz" {
		return Flags{}, &FieldError{Field: "kind", Problem: fmt.Sprintf("%q is not Flagz", kind)}
	}
	if raw, ok := o.get("metadata"); ok {
		var meta struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(raw, &meta); err != nil {
			return Flags{}, &FieldError{Field: "metadata.name", Problem: "want a string"}
		}
		f.Component = meta.Name
	}
	f.Values = map[string]string{}
	if raw, ok := o.get("flags"); ok {
		flags, err := decodeObject("flags", raw)
		if err != nil {
			return Flags{}, err
		}
		for _, name := range flags.keys() {
			var v string
			if err := json.Unmarshal(flags.fields[name], &v); err != nil {
				return Flags{}, &FieldError{Field: flags.path(name), Problem: "want a string, got " + jsonKind(flags.fields[name])}
			}
			f.Values[name] = v
		}
	}
	return f, nil
}

// parseFlagzText reads the text page: a header naming the component
// ("kube-scheduler flags" in v1.34, "kube-scheduler flagz" later) and a
// warning, then one "name<sep>value" line per flag, sorted by name, where
// <sep> is one of ":", ": ", "=" or " ", the same for the whole page.
func parseFlagzText(data []byte) (Flags, error) {
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	f := Flags{Format: FlagzText, Values: map[string]string{}}
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i == len(lines) {
		return Flags{}, &FieldError{Problem: "empty answer; /flagz starts with a line naming the component"}
	}
	header := strings.TrimSpace(lines[i])
	component, ok := strings.CutSuffix(header, " flags")
	if !ok {
		component, ok = strings.CutSuffix(header, " flagz")
	}
	if !ok || component == "" || strings.ContainsAny(component, " \t") {
		return Flags{}, &FieldError{Field: fmt.Sprintf("line %d", i+1), Problem: fmt.Sprintf("%q is not the header \"<component> flagz\" (is the URL a /flagz page?)", clip(header))}
	}
	f.Component = component
	i++
	if i < len(lines) && strings.HasPrefix(lines[i], "Warning:") {
		i++
	}
	type entry struct {
		line       int
		name, rest string
	}
	var entries []entry
	for ; i < len(lines); i++ {
		line := lines[i]
		if strings.TrimSpace(line) == "" {
			continue
		}
		n := flagNameLen(line)
		if n == 0 {
			return Flags{}, &FieldError{Field: fmt.Sprintf("line %d", i+1), Problem: fmt.Sprintf("%q does not start with a flag name", clip(line))}
		}
		entries = append(entries, entry{line: i + 1, name: line[:n], rest: line[n:]})
	}
	rests := make([]string, len(entries))
	for j, e := range entries {
		rests[j] = e.rest
	}
	sep, err := textSeparator(rests)
	if err != nil {
		return Flags{}, err
	}
	for _, e := range entries {
		value, ok := strings.CutPrefix(e.rest, sep)
		if !ok {
			return Flags{}, &FieldError{Field: fmt.Sprintf("line %d", e.line), Problem: fmt.Sprintf("flag %s is not followed by %q as the other flags are", e.name, sep)}
		}
		if _, dup := f.Values[e.name]; dup {
			return Flags{}, &FieldError{Field: fmt.Sprintf("line %d", e.line), Problem: fmt.Sprintf("flag %s appears twice", e.name)}
		}
		f.Values[e.name] = value
	}
	return f, nil
}

// textSeparator finds the one separator of a text page from what follows
// each flag name. ":" and ": " are told apart by whether every line with a
// value has a space after the colon.
func textSeparator(rests []string) (string, error) {
	var colon, colonSpace int
	first := byte(0)
	for _, rest := range rests {
		if rest == "" {
			return "", &FieldError{Problem: "a flag line has no separator after the flag name"}
		}
		if first == 0 {
			first = rest[0]
		} else if rest[0] != first {
			return "", &FieldError{Problem: "the flag lines do not share one separator (\":\", \": \", \"=\" or \" \")"}
		}
		if rest[0] == ':' {
			colon++
			if strings.HasPrefix(rest, ": ") {
				colonSpace++
			}
		}
	}
	switch first {
	case 0:
		return ":", nil // no flags at all
	case '=':
		return "=", nil
	case ' ':
		return " ", nil
	case ':':
		if colonSpace == colon {
			return ": ", nil
		}
		return ":", nil
	}
	return "", &FieldError{Problem: fmt.Sprintf("%q is not a flagz separator (\":\", \": \", \"=\" or \" \")", string(first))}
}

// flagNameLen is the length of the flag name that starts line: pflag names
// are letters, digits, '-', '_' and '.'.
func flagNameLen(line string) int {
	for i := 0; i < len(line); i++ {
		c := line[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return i
		}
	}
	return len(line)
}

// Names returns the flag names, sorted.
func (f Flags) Names() []string {
	names := make([]string, 0, len(f.Values))
	for n := range f.Values {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Classified reports whether flagz hid the flag's value.
func (f Flags) Classified(name string) bool { return f.Values[name] == classified }

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}
