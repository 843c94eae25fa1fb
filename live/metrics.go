package live

import (
	"log/slog"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacer-ps/pacer/live/ops"
	"github.com/pacer-ps/pacer/paradigm"
)

// collector exports a server's counters at scrape time: nothing is added
// to the push and pull paths, which already keep these counts for the
// run summary.
type collector struct{ sv *Server }

var (
	mPushes     = prometheus.NewDesc("pacer_shard_pushes_total", "Gradient blocks pushed to the shard.", []string{"shard"}, nil)
	mUpdates    = prometheus.NewDesc("pacer_shard_updates_total", "Applies (versions) of the shard.", []string{"shard"}, nil)
	mDropped    = prometheus.NewDesc("pacer_shard_dropped_total", "Gradients the aggregator refused as stale or surplus.", []string{"shard"}, nil)
	mRefused    = prometheus.NewDesc("pacer_shard_refused_total", "Frames refused with an error (unknown shard or worker, wrong length, NaN, implausible version, missing control token).", []string{"shard", "reason"}, nil)
	mJobRefused = prometheus.NewDesc("pacer_job_refused_total", "Control frames the coordinator refused (unknown worker id, implausible clock report).", nil, nil)
	mVersion    = prometheus.NewDesc("pacer_shard_version", "The shard's current version.", []string{"shard"}, nil)
	mCoW        = prometheus.NewDesc("pacer_shard_copy_on_write_total", "Applies that copied the block because a pull was still sending it.", []string{"shard"}, nil)
	mCkpt       = prometheus.NewDesc("pacer_shard_checkpoints_total", "Checkpoints written.", []string{"shard"}, nil)
	mCkptFail   = prometheus.NewDesc("pacer_shard_checkpoint_failures_total", "Checkpoint writes that failed (full disk, unwritable directory); the last written checkpoint stays.", []string{"shard"}, nil)
	mCkptVer    = prometheus.NewDesc("pacer_shard_checkpoint_version", "The version the last written checkpoint holds (0: none yet).", []string{"shard"}, nil)
	mStale      = prometheus.NewDesc("pacer_shard_staleness", "Staleness of applied gradients (versions).", []string{"shard"}, nil)
	mBytes      = prometheus.NewDesc("pacer_wire_bytes_total", "Bytes on the data plane, headers included.", []string{"shard", "direction"}, nil)
	mFrames     = prometheus.NewDesc("pacer_wire_frames_total", "Frames on the data plane.", []string{"shard", "direction"}, nil)
	mAuth       = prometheus.NewDesc("pacer_wire_auth_failures_total", "Connections refused for a missing or wrong token.", []string{"shard"}, nil)
	mDecode     = prometheus.NewDesc("pacer_wire_decode_errors_total", "Malformed frames by kind.", []string{"shard", "kind"}, nil)
	mSlow       = prometheus.NewDesc("pacer_wire_slow_peers_total", "Connections cut off for not reading (notice queue full, or a write timed out).", []string{"shard"}, nil)
	mPending    = prometheus.NewDesc("pacer_wire_pending_refused_total", "Connections closed unread because too many unauthenticated ones were open.", []string{"shard"}, nil)
	mJobPushes  = prometheus.NewDesc("pacer_job_pushes_total", "Pushes counted by the coordinator.", nil, nil)
	mReleases   = prometheus.NewDesc("pacer_job_releases_total", "Gate releases.", nil, nil)
	mMaxGap     = prometheus.NewDesc("pacer_job_max_gap", "Largest clock gap at a release.", nil, nil)
	mLive       = prometheus.NewDesc("pacer_job_live_workers", "Workers the coordinator counts as live.", nil, nil)
	mRemoved    = prometheus.NewDesc("pacer_job_removed_total", "Workers removed after missed heartbeats.", nil, nil)
	mWait       = prometheus.NewDesc("pacer_worker_wait_seconds_total", "Seconds a worker spent held (push, gate, pull).", []string{"worker"}, nil)
	mBusy       = prometheus.NewDesc("pacer_worker_compute_seconds_total", "Seconds a worker spent computing.", []string{"worker"}, nil)
	mWPushes    = prometheus.NewDesc("pacer_worker_pushes_total", "Pushes per worker.", []string{"worker"}, nil)
	mWalRecs    = prometheus.NewDesc("pacer_shard_wal_records_total", "Records appended to the durability log (--durability log).", []string{"shard"}, nil)
	mWalBytes   = prometheus.NewDesc("pacer_shard_wal_bytes_total", "Bytes written to the durability log.", []string{"shard"}, nil)
	mWalSyncs   = prometheus.NewDesc("pacer_shard_wal_fsyncs_total", "Fsyncs of the durability log (records ÷ fsyncs: pushes sharing one).", []string{"shard"}, nil)
	mWalReplay  = prometheus.NewDesc("pacer_shard_wal_replayed_records_total", "Log records replayed when the shard restored.", []string{"shard"}, nil)
	mNFUpdates  = prometheus.NewDesc("pacer_shard_non_finite_updates_total", "Updates skipped because they would have made a weight NaN or ±Inf.", []string{"shard"}, nil)
	mWalFails   = prometheus.NewDesc("pacer_shard_wal_failures_total", "Durability log outages (a write or fsync failed, e.g. a full disk): pushes refused, the shard rolled back to the log, retried.", []string{"shard"}, nil)
	mWalRetries = prometheus.NewDesc("pacer_shard_wal_retries_total", "Pushes that repeated one already logged (acknowledged, not applied twice).", []string{"shard"}, nil)
	mDecisions  = prometheus.NewDesc("pacer_auto_decisions_total", "--paradigm auto's decisions, by whether they switched.", []string{"switch"}, nil)
	mSwitches   = prometheus.NewDesc("pacer_shard_switches_total", "--paradigm auto's regimes the shard has taken.", []string{"shard"}, nil)
	mLogDrop    = prometheus.NewDesc("pacer_log_suppressed_total", "Log lines triggered by peers' frames and dropped by the rate limit.", []string{"shard"}, nil)
)

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{mPushes, mUpdates, mDropped, mRefused, mVersion, mCoW, mCkpt, mCkptFail, mCkptVer, mStale,
		mBytes, mFrames, mAuth, mDecode, mSlow, mPending, mJobPushes, mReleases, mMaxGap, mLive, mRemoved, mWait, mBusy, mWPushes, mLogDrop, mJobRefused,
		mWalRecs, mWalBytes, mWalSyncs, mWalReplay, mWalRetries, mWalFails, mNFUpdates, mDecisions, mSwitches} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	st := c.sv.shard.Stats()
	sh := strconv.Itoa(st.Shard)
	counter := func(d *prometheus.Desc, v float64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, l...)
	}
	gauge := func(d *prometheus.Desc, v float64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, l...)
	}
	counter(mPushes, float64(st.Pushes), sh)
	counter(mUpdates, float64(st.Updates), sh)
	counter(mDropped, float64(st.Dropped), sh)
	counter(mRefused, float64(st.NonFinite), sh, "non_finite")
	counter(mRefused, float64(st.Refused-st.NonFinite), sh, "bad_request")
	gauge(mVersion, float64(st.Version), sh)
	counter(mCoW, float64(st.CopyOnWrite), sh)
	counter(mCkpt, float64(st.Checkpoints), sh)
	counter(mCkptFail, float64(st.CheckpointFailures), sh)
	counter(mNFUpdates, float64(st.NonFiniteUpdates), sh)
	gauge(mCkptVer, float64(st.CheckpointVersion), sh)
	if c.sv.cfg.Params.Job.Spec.Kind == paradigm.Auto {
		counter(mSwitches, float64(st.Switches), sh)
	}
	counter(mLogDrop, float64(c.sv.plog.Suppressed()), sh)
	if c.sv.cfg.Durability == DurabilityLog {
		counter(mWalRecs, float64(st.LogRecords), sh)
		counter(mWalBytes, float64(st.LogBytes), sh)
		counter(mWalSyncs, float64(st.LogFsyncs), sh)
		counter(mWalReplay, float64(st.Replayed), sh)
		counter(mWalRetries, float64(st.Retries), sh)
		counter(mWalFails, float64(st.LogFailures), sh)
	}
	n, sum, buckets := stalenessBuckets(st.Staleness)
	ch <- prometheus.MustNewConstHistogram(mStale, n, sum, buckets, sh)
	ws := c.sv.ws.Stats().Snapshot()
	counter(mBytes, float64(ws.BytesIn), sh, "in")
	counter(mBytes, float64(ws.BytesOut), sh, "out")
	counter(mFrames, float64(ws.FramesIn), sh, "in")
	counter(mFrames, float64(ws.FramesOut), sh, "out")
	counter(mAuth, float64(ws.AuthFailures), sh)
	for kind, v := range ws.DecodeErrors {
		counter(mDecode, float64(v), sh, kind)
	}
	counter(mSlow, float64(ws.SlowPeers), sh)
	counter(mPending, float64(ws.PendingRefused), sh)
	if c.sv.coord == nil {
		return
	}
	cs := c.sv.coord.Stats()
	counter(mJobPushes, float64(cs.Pushes))
	counter(mReleases, float64(cs.Releases))
	gauge(mMaxGap, float64(cs.MaxGap))
	gauge(mLive, float64(cs.Live))
	counter(mRemoved, float64(cs.Removed))
	counter(mJobRefused, float64(cs.Refused))
	if c.sv.coord.auto != nil {
		var sw float64
		for _, d := range cs.Decisions {
			if d.Switch {
				sw++
			}
		}
		counter(mDecisions, sw, "true")
		counter(mDecisions, float64(len(cs.Decisions))-sw, "false")
	}
	for p := range cs.WorkerPushes {
		w := strconv.Itoa(p)
		counter(mWait, cs.WorkerWait[p], w)
		counter(mBusy, cs.WorkerBusy[p], w)
		counter(mWPushes, float64(cs.WorkerPushes[p]), w)
	}
}

// StalenessBuckets are the staleness histogram's upper bounds, the same
// for every shard and every job, so that histograms from different shards,
// runs and paradigms add up and compare bucket by bucket (one bucket per
// observed value made every scrape's buckets different).
var StalenessBuckets = []float64{0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256, 512}

// stalenessBuckets folds a per-value staleness count (index = staleness)
// into StalenessBuckets' cumulative counts.
func stalenessBuckets(hist []int64) (n uint64, sum float64, buckets map[float64]uint64) {
	buckets = make(map[float64]uint64, len(StalenessBuckets))
	for _, b := range StalenessBuckets {
		buckets[b] = 0
	}
	for s, k := range hist {
		if k <= 0 {
			continue
		}
		n += uint64(k)
		sum += float64(s) * float64(k)
		for _, b := range StalenessBuckets {
			if float64(s) <= b {
				buckets[b] += uint64(k)
			}
		}
	}
	return n, sum, buckets
}

// serveMetrics serves /metrics for sv on addr until the returned stop is
// called, with /healthz and /readyz beside it. Each server has its own
// registry, so several shards in one process (inproc mode) do not collide.
func serveMetrics(addr string, sv *Server, log *slog.Logger) (stop func(), err error) {
	stop, at, err := ops.Serve(addr, collector{sv}, sv.ready.Load, log)
	if err != nil {
		return nil, err
	}
	sv.metricsMu.Lock()
	sv.metricsAt = at
	sv.metricsMu.Unlock()
	return stop, nil
}

// metricsAddr is where the metrics are served ("" before they are).
func (sv *Server) metricsAddr() string {
	sv.metricsMu.Lock()
	defer sv.metricsMu.Unlock()
	return sv.metricsAt
}
