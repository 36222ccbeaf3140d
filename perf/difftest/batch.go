package difftest

// BatchRecord is a line of `schedq-upstream-replay --batch`'s input and
// output. Its fields are in the order of their names, as the recordings of
// pkg/queue/trace/testdata/upstream-random have them.
type BatchRecord struct {
	Error           string   `json:"error,omitempty"`
	Out             *string  `json:"out,omitempty"`
	PopFromBackoffQ bool     `json:"popFromBackoffQ"`
	Seed            int64    `json:"seed"`
	Trace           string   `json:"trace"`
	UpstreamLogged  []string `json:"upstreamLogged,omitempty"`
}
