// Command rescore scores saved explain-accuracy recordings (make
// explain-accuracy writes them) with today's explain, without building a
// control plane: a quick loop while working on pkg/explain. It pools the
// recordings per gate setting, as TestExplainAccuracy does.
//
//	go run ./explainacc/rescore [-v] [-run REGEXP] 'out/explainacc/recording-*.json.gz'
package main

import (
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/perf/explainacc"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain"
)

func main() {
	verbose := flag.Bool("v", false, "list the largest errors of each recording")
	each := flag.Bool("each", false, "print each recording's tables, not only the pooled ones")
	summary := flag.Bool("summary", false, "print one line per recording: its placement by queue, attempts and next-try estimate")
	run := flag.String("run", "", "score only the recordings whose name matches this regular expression")
	pod := flag.String("pod", "", "instead of scoring, print explain's answer for this pod (namespace/name) at every sample, beside the ground truth")
	rate := flag.Bool("attempt-rate", false, "score explain --attempt-rate: each sample's input with the attempt rate since the sample a second before")
	fit := flag.String("fit", "", "instead of scoring, fit explain's calibration on the recordings and write it to this Go file (pkg/explain/zz_generated.calibration.go); the recordings must be of the training seeds")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: rescore [-v] [-each] [-run REGEXP] GLOB...")
		os.Exit(2)
	}
	var match *regexp.Regexp
	if *run != "" {
		match = regexp.MustCompile(*run)
	}
	if *fit != "" {
		if err := fitCalibration(*fit, flag.Args()); err != nil {
			fmt.Fprintf(os.Stderr, "error: %v\n", err)
			os.Exit(1)
		}
		return
	}
	pooled := map[bool]*explainacc.Result{}
	both := explainacc.NewResult("both gate settings", false)
	version := ""
	for _, glob := range flag.Args() {
		paths, err := filepath.Glob(glob)
		if err != nil || len(paths) == 0 {
			fmt.Fprintf(os.Stderr, "error: %q: no recordings (%v)\n", glob, err)
			os.Exit(1)
		}
		for _, p := range paths {
			rec, err := explainacc.Load(p)
			if err != nil {
				fmt.Fprintf(os.Stderr, "error: %v\n", err)
				os.Exit(1)
			}
			if match != nil && !match.MatchString(rec.Name) {
				continue
			}
			version = rec.KubeVersion
			if *rate {
				rec = rec.WithAttemptRate(time.Second)
			}
			if *pod != "" {
				trace(rec, *pod)
				continue
			}
			res := explainacc.Score(rec, explain.Infer)
			res.Verbose = *verbose
			if *each {
				var text strings.Builder
				res.WriteText(&text)
				fmt.Printf("%s (seed %d)\n%s", p, rec.Seed, text.String())
			}
			if *summary {
				fmt.Println(explainacc.SummaryLine(rec, res))
			}
			if pooled[rec.PopFromBackoffQ] == nil {
				pooled[rec.PopFromBackoffQ] = explainacc.NewResult("all recordings", rec.PopFromBackoffQ)
			}
			pooled[rec.PopFromBackoffQ].Merge(res)
			both.Merge(res)
		}
	}
	if *pod != "" {
		return
	}
	for _, pfb := range []bool{true, false} {
		if res := pooled[pfb]; res != nil {
			res.Verbose = *verbose
			var text strings.Builder
			res.WriteText(&text)
			fmt.Print(text.String())
		}
	}
	var text strings.Builder
	both.WriteCalibration(&text, version)
	fmt.Print(text.String())
}

// trace prints, at every sample, explain's answer for pod, the ground truth
// and the pod's next pop.
func trace(rec *explainacc.Recording, pod string) {
	fmt.Printf("## %s, SchedulerPopFromBackoffQ=%v\n", rec.Name, rec.PopFromBackoffQ)
	for i, s := range rec.Samples {
		truth, ok := s.Before[pod]
		if !ok {
			truth, ok = s.Mid[pod]
		}
		for _, e := range explain.Infer(rec.Input(i)) {
			if e.Namespace+"/"+e.Name != pod {
				continue
			}
			next := "none"
			if pops := rec.Pops[truth.UID]; ok && truth.Attempts < len(pops) {
				next = pops[truth.Attempts].Sub(s.Now).Round(time.Millisecond).String()
			}
			est := "-"
			if e.NextRetry != nil && e.NextRetry.Estimate != nil {
				est = e.NextRetry.Estimate.Sub(s.Now).Round(time.Millisecond).String()
			}
			fmt.Printf("%s  truth %-13s (attempts %d, mid %s)  explain %-17s %.2f attempts %-4s estimate %-8s next pop %-8s | %v\n",
				s.Now.Format("15:04:05.000"), truth.Queue, truth.Attempts, s.Mid[pod].Queue, e.Queue.Word(), e.Confidence, explain.FormatAttempts(e), est, next, e.Alternatives)
			if e.NextRetry != nil && e.NextRetry.Note != "" {
				fmt.Printf("    note: %s\n", e.NextRetry.Note)
			}
		}
	}
}

// calibrationShrink is how many answers at the model's own odds each fitted
// step is pulled toward (explain.FitCalibration).
const calibrationShrink = 20

// minTrainingSeed is the first seed of the calibration's training runs
// (perf/explainacc's calibrationSeeds): fitting on a reported run is
// refused.
const minTrainingSeed = 100

// fitCalibration fits explain's calibration on the recordings of globs and
// writes it as Go to path.
func fitCalibration(path string, globs []string) error {
	type obs struct {
		raws  []float64
		right []bool
	}
	byClass := map[string]*obs{}
	var names []string
	seeds := map[uint64]bool{}
	for _, glob := range globs {
		paths, err := filepath.Glob(glob)
		if err != nil || len(paths) == 0 {
			return fmt.Errorf("%q: no recordings (%v)", glob, err)
		}
		for _, p := range paths {
			rec, err := explainacc.Load(p)
			if err != nil {
				return err
			}
			if rec.Seed < minTrainingSeed {
				return fmt.Errorf("%s (%s, seed %d) is not a training run: fit on seeds from %d up only, so that the reported runs stay out of the fit", p, rec.Name, rec.Seed, minTrainingSeed)
			}
			seeds[rec.Seed] = true
			names = append(names, fmt.Sprintf("%s %s gate=%v", rec.KubeVersion, rec.Name, rec.PopFromBackoffQ))
			explainacc.CalibrationSamples(rec, func(class string, raw float64, right bool) {
				o := byClass[class]
				if o == nil {
					o = &obs{}
					byClass[class] = o
				}
				o.raws = append(o.raws, raw)
				o.right = append(o.right, right)
			})
		}
	}
	classes := make([]string, 0, len(byClass))
	for c := range byClass {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	sort.Strings(names)
	var seedList []string
	for s := range seeds {
		seedList = append(seedList, strconv.FormatUint(s, 10))
	}
	sort.Strings(seedList)
	var b strings.Builder
	fmt.Fprintf(&b, "// Code generated by rescore -fit. DO NOT EDIT.\n\npackage explain\n\n")
	fmt.Fprintf(&b, "// fittedCalibration was fitted on %d training recordings (seeds %s), each\n// step pulled toward the model's odds by %d answers:\n//\n", len(names), strings.Join(seedList, ", "), calibrationShrink)
	for _, n := range names {
		fmt.Fprintf(&b, "//\t%s\n", n)
	}
	fmt.Fprintf(&b, "var fittedCalibration = map[string][]CalibrationStep{\n")
	for _, c := range classes {
		o := byClass[c]
		steps := explain.FitCalibration(o.raws, o.right, calibrationShrink)
		fmt.Fprintf(&b, "\t%q: { // %d answers\n", c, len(o.raws))
		for _, st := range steps {
			fmt.Fprintf(&b, "\t\t{Below: %.4f, P: %.4f},\n", st.Below, st.P)
		}
		fmt.Fprintf(&b, "\t},\n")
	}
	fmt.Fprintf(&b, "}\n")
	src, err := format.Source([]byte(b.String()))
	if err != nil {
		return err
	}
	return os.WriteFile(path, src, 0o644)
}
