package groundtruth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPod_MarshalJSON(t *testing.T) {
	ts := time.Date(2026, 1, 2, 15, 4, 5, 123456789, time.FixedZone("X", 3600))
	tests := []struct {
		name string
		pod  Pod
		want string
	}{
		{
			name: "backoff, milliseconds in UTC",
			pod:  Pod{Namespace: "default", Name: "p1", Queue: Backoff, Attempts: 2, Timestamp: ts, BackoffExpiresAt: ts.Truncate(time.Second).Add(2 * time.Second)},
			want: `{"namespace":"default","name":"p1","queue":"backoff","attempts":2,"timestamp":"2026-01-02T14:04:05.123Z","backoffExpiresAt":"2026-01-02T14:04:07.000Z"}`,
		},
		{
			name: "zero times left out",
			pod:  Pod{Namespace: "ns", Name: "g", Queue: Gated},
			want: `{"namespace":"ns","name":"g","queue":"gated","attempts":0}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.pod)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("(-want, +got):\n%s", diff)
			}
			var back Pod
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatal(err)
			}
			want := tc.pod
			want.Timestamp = want.Timestamp.Truncate(time.Millisecond)
			if !back.Timestamp.Equal(want.Timestamp) || !back.BackoffExpiresAt.Equal(want.BackoffExpiresAt) || back.Key() != want.Key() || back.Queue != want.Queue || back.Attempts != want.Attempts {
				t.Errorf("round trip: %+v, want %+v", back, want)
			}
		})
	}
}

func TestFetch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != Path {
			http.Error(w, "no such page", http.StatusNotFound)
			return
		}
		w.Write([]byte(`{"pods":[{"namespace":"default","name":"b","queue":"unschedulable","attempts":1,"timestamp":"2026-01-02T14:04:05.123Z"},` +
			`{"namespace":"default","name":"a","queue":"inFlight","attempts":3,"timestamp":"2026-01-02T14:04:06.000Z"}]}`))
	}))
	defer srv.Close()

	q, err := Fetch(context.Background(), nil, srv.URL+Path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[QueueName]int{Unschedulable: 1, InFlight: 1}, q.Count()); diff != "" {
		t.Errorf("Count (-want, +got):\n%s", diff)
	}
	if p, ok := q.Get("default", "a"); !ok || p.Attempts != 3 {
		t.Errorf("Get(default, a) = %+v, %v", p, ok)
	}
	q.Sort()
	if q.Pods[0].Name != "a" {
		t.Errorf("Sort: first %s, want a", q.Pods[0].Name)
	}

	if _, err := Fetch(context.Background(), nil, srv.URL+"/nope"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("Fetch of a missing page: err = %v, want a 404", err)
	}
}
