package worker

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// workerCollector exports a worker's own counters (`pacer worker
// --metrics-addr`): what the coordinator counts for it, seen from the
// worker, plus its data plane's traffic over every shard link.
type workerCollector struct{ w *Worker }

var (
	mWkPushes = prometheus.NewDesc("pacer_worker_pushes_total", "Pushes per worker.", []string{"worker"}, nil)
	mWkWait   = prometheus.NewDesc("pacer_worker_wait_seconds_total", "Seconds a worker spent held (push, gate, pull).", []string{"worker"}, nil)
	mWkBusy   = prometheus.NewDesc("pacer_worker_compute_seconds_total", "Seconds a worker spent computing.", []string{"worker"}, nil)
	mWkClock  = prometheus.NewDesc("pacer_worker_clock", "The worker's iteration clock.", []string{"worker"}, nil)
	mWkBytes  = prometheus.NewDesc("pacer_worker_wire_bytes_total", "Bytes on the worker's shard and coordinator links, headers included.", []string{"worker", "direction"}, nil)
	mWkErrs   = prometheus.NewDesc("pacer_worker_wire_errors_total", "Error replies the worker received (refused frames) and connections it lost.", []string{"worker", "kind"}, nil)
)

func (c workerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{mWkPushes, mWkWait, mWkBusy, mWkClock, mWkBytes, mWkErrs} {
		ch <- d
	}
}

func (c workerCollector) Collect(ch chan<- prometheus.Metric) {
	w := c.w
	id := strconv.FormatInt(w.mID.Load(), 10)
	m := func(d *prometheus.Desc, t prometheus.ValueType, v float64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, t, v, append([]string{id}, l...)...)
	}
	m(mWkPushes, prometheus.CounterValue, float64(w.mPushes.Load()))
	m(mWkWait, prometheus.CounterValue, time.Duration(w.mWaitNS.Load()).Seconds())
	m(mWkBusy, prometheus.CounterValue, time.Duration(w.mBusyNS.Load()).Seconds())
	m(mWkClock, prometheus.GaugeValue, float64(w.mClock.Load()))
	ws := w.wireCfg.Stats.Snapshot()
	m(mWkBytes, prometheus.CounterValue, float64(ws.BytesIn), "in")
	m(mWkBytes, prometheus.CounterValue, float64(ws.BytesOut), "out")
	m(mWkErrs, prometheus.CounterValue, float64(ws.RemoteErrors), "remote")
	m(mWkErrs, prometheus.CounterValue, float64(ws.IOErrors), "io")
}
