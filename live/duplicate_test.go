package live

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/worker"
	"github.com/pacer-ps/pacer/wire"
)

// TestDuplicateWorkerID: a BSP job of 3 workers on 2 shards, and a second
// worker started with --id 0 while the first runs (issue 37 point 4: BSP
// hung in 2 of 4 runs, the displaced process exiting 1 with "clock report
// N of worker 0: the last one counted is 0"). The newer process takes the
// id and the job finishes; the older one stops with an error naming the
// id, and does not redial (its RunWorker has returned).
func TestDuplicateWorkerID(t *testing.T) {
	cfg := quickJob(t, "bsp", 3, 2)
	cfg.HeartbeatTimeout, cfg.TrainLimit, cfg.TestLimit = 5*time.Second, 1600, 10
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	ds, err := job.Data(cfg)
	if err != nil {
		t.Fatal(err)
	}
	desc := &job.Description{Version: job.Version, Job: cfg, TrainN: ds.Train.N} // 100 pushes
	tr := &wire.Inproc{}
	addrs := []string{"s0", "s1"}
	var sv [2]*Server
	for i, a := range addrs {
		ln, err := tr.Listen(a)
		if err != nil {
			t.Fatal(err)
		}
		sv[i] = runServer(t, ServerConfig{Index: i, Params: desc, Listener: ln, Transport: tr, Token: "secret",
			ControlToken: "control-secret", ShardAddrs: addrs})
	}
	coord := sv[0].coord
	watch := watchGate(coord)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard against a hang
	defer cancel()
	type result struct {
		name string
		res  worker.Result
		err  error
	}
	results := make(chan result, 4)
	run := func(name string, id int) {
		go func() {
			res, err := worker.Run(ctx, worker.Config{Coordinator: "s0", Transport: tr, Token: "secret", ID: id, Data: ds, ConnectTimeout: 5 * time.Second})
			results <- result{name, res, err}
		}()
	}
	run("first worker 0", 0)
	run("worker 1", 1)
	run("worker 2", 2)
	// The duplicate starts once the job is under way: 10 pushes counted.
	for coord.Stats().Pushes < 10 {
		select {
		case <-watch.changed:
		case <-ctx.Done():
			t.Fatalf("the job did not start: coordinator %+v", coord.Stats())
		}
	}
	run("second worker 0", 0)

	errs := map[string]error{}
	for range 4 {
		select {
		case r := <-results:
			errs[r.name] = r.err
		case <-ctx.Done():
			t.Fatalf("the job hung: coordinator %+v; results %v; shard versions %d, %d",
				coord.Stats(), errs, sv[0].Shard().Stats().Version, sv[1].Shard().Stats().Version)
		}
	}
	st := coord.Stats()
	t.Logf("pushes %d of %d, live %d, removed %d, joined %d, refused %d; worker pushes %v; first worker 0: %v",
		st.Pushes, st.Target, st.Live, st.Removed, st.Joined, st.Refused, st.WorkerPushes, errs["first worker 0"])
	if !st.Done || st.Pushes < st.Target {
		t.Errorf("job not done: pushes %d of %d", st.Pushes, st.Target)
	}
	for _, name := range []string{"second worker 0", "worker 1", "worker 2"} {
		if errs[name] != nil {
			t.Errorf("%s: %v", name, errs[name])
		}
	}
	if err := errs["first worker 0"]; err == nil || !strings.Contains(err.Error(), "worker id 0 was taken over by a newer process") {
		t.Errorf("the displaced worker 0 ended with %v: want an error naming its id", err)
	}
}
