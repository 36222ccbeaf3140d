package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"k8s.io/client-go/util/jsonpath"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/quote"
)

// explainFormats are the -o values explain takes besides the printers'
// (json, yaml, jsonpath, go-template, …), for help and errors.
var explainFormats = []string{"wide", "name", "custom-columns=HEADER:JSONPATH,…"}

// column is one column of -o custom-columns.
type column struct {
	header string
	path   *jsonpath.JSONPath
}

// parseCustomColumns reads kubectl's spec: HEADER:JSONPATH pairs, comma
// separated; a path may leave out its braces and its leading dot.
func parseCustomColumns(spec string) ([]column, error) {
	if spec == "" {
		return nil, fmt.Errorf("-o custom-columns= needs HEADER:JSONPATH pairs, e.g. -o custom-columns=NAME:.name,QUEUE:.queue")
	}
	var cols []column
	for _, part := range strings.Split(spec, ",") {
		header, path, ok := strings.Cut(part, ":")
		if !ok || header == "" || path == "" {
			return nil, fmt.Errorf("-o custom-columns: %q is not HEADER:JSONPATH, e.g. QUEUE:.queue", part)
		}
		p, err := compilePath(path)
		if err != nil {
			return nil, fmt.Errorf("-o custom-columns: %s: %v", header, err)
		}
		cols = append(cols, column{header: header, path: p})
	}
	return cols, nil
}

// compilePath takes a JSONPath with or without braces and leading dot.
func compilePath(path string) (*jsonpath.JSONPath, error) {
	if !strings.HasPrefix(path, "{") {
		path = "{." + strings.TrimPrefix(path, ".") + "}"
	}
	p := jsonpath.New("").AllowMissingKeys(true)
	if err := p.Parse(path); err != nil {
		return nil, err
	}
	return p, nil
}

// asJSONValue is an explanation as JSON sees it, for JSONPath.
func asJSONValue(e explain.Explanation) (any, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	var v any
	err = json.Unmarshal(b, &v)
	return v, err
}

func evalPath(p *jsonpath.JSONPath, v any) (string, error) {
	var buf bytes.Buffer
	if err := p.Execute(&buf, v); err != nil {
		return "", err
	}
	if buf.Len() == 0 {
		return "<none>", nil
	}
	return buf.String(), nil
}

// printCustomColumns writes one row per explanation.
func printCustomColumns(w io.Writer, items []explain.Explanation, cols []column, noHeaders bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	if !noHeaders {
		headers := make([]string, len(cols))
		for i, c := range cols {
			headers[i] = c.header
		}
		fmt.Fprintln(tw, strings.Join(headers, "\t"))
	}
	for _, e := range items {
		v, err := asJSONValue(e)
		if err != nil {
			return err
		}
		cells := make([]string, len(cols))
		for i, c := range cols {
			if cells[i], err = evalPath(c.path, v); err != nil {
				return fmt.Errorf("-o custom-columns: %s: %v", c.header, err)
			}
			cells[i] = quote.Line(cells[i])
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// printNames writes pod/NAME per line, as kubectl's -o name does.
func printNames(w io.Writer, items []explain.Explanation) {
	for _, e := range items {
		fmt.Fprintf(w, "pod/%s\n", quote.Cell(e.Name))
	}
}

// sortExplanations orders items by the JSONPath in --sort-by: numbers as
// numbers, the rest as text; ties keep namespace/name order.
func sortExplanations(items []explain.Explanation, sortBy string) error {
	p, err := compilePath(sortBy)
	if err != nil {
		return fmt.Errorf("--sort-by=%s: %v", sortBy, err)
	}
	keys := make([]string, len(items))
	found := false
	for i, e := range items {
		v, err := asJSONValue(e)
		if err != nil {
			return err
		}
		results, err := p.FindResults(v)
		if err != nil {
			return fmt.Errorf("--sort-by=%s: %v", sortBy, err)
		}
		for _, r := range results {
			found = found || len(r) > 0
		}
		if keys[i], err = evalPath(p, v); err != nil {
			return fmt.Errorf("--sort-by=%s: %v", sortBy, err)
		}
	}
	// As kubectl does: a path that matches nothing is a mistake, not an
	// order.
	if !found && len(items) > 0 {
		return fmt.Errorf("--sort-by=%s: couldn't find any field with path %q in the list of objects (the fields are those of -o json)", sortBy, sortBy)
	}
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ka, kb := keys[idx[a]], keys[idx[b]]
		fa, errA := strconv.ParseFloat(ka, 64)
		fb, errB := strconv.ParseFloat(kb, 64)
		if errA == nil && errB == nil {
			return fa < fb
		}
		return ka < kb
	})
	sorted := make([]explain.Explanation, len(items))
	for i, j := range idx {
		sorted[i] = items[j]
	}
	copy(items, sorted)
	return nil
}
