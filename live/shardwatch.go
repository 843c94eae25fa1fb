package live

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/pacer-ps/pacer/live/proto"
)

// probeEvery is the pace of the coordinator's probes of the other shards;
// a probe unanswered for proto.WaitReportAfter is a shard that stopped answering.
const probeEvery = proto.WaitReportAfter / 2

// probeState is what the coordinator knows of one shard's answers: a pure
// record of the instants it is given, tested without a clock.
type probeState struct {
	quietSince time.Time // when the shard last answered, or the watch began
	reported   bool      // the silence has been reported
	next       time.Time // the next report of a silence that goes on
}

// answered records an answer at now; it returns whether it ends a
// reported silence (the shard answers again), and the silence's length.
func (s *probeState) answered(now time.Time) (time.Duration, bool) {
	back, was := s.reported, now.Sub(s.quietSince)
	*s = probeState{quietSince: now}
	return was, back
}

// silent records a probe unanswered at now; it returns whether the
// silence is to be reported now (first at proto.WaitReportAfter, then every
// proto.WaitReportAfter), and how long it has lasted.
func (s *probeState) silent(now time.Time) (time.Duration, bool) {
	d := now.Sub(s.quietSince)
	if d < proto.WaitReportAfter || now.Before(s.next) {
		return d, false
	}
	s.reported, s.next = true, now.Add(proto.WaitReportAfter)
	return d, true
}

// watchShard probes shard i (not the coordinator's own) until ctx ends,
// and logs when it stops answering and when it answers again: a stopped
// shard (SIGSTOP, a hung host) holds every worker that pushes to it
// without a fault anyone else sees.
func (sv *Server) watchShard(ctx context.Context, i int, addr string) {
	o := proto.NewObserver(sv.cfg.Transport, addr, i, sv.cfg.Token, sv.cfg.ControlToken)
	defer o.Close()
	st := probeState{quietSince: time.Now()}
	log := sv.log.With("role", "coordinator", "shard", i)
	tick := time.NewTicker(probeEvery) // the probes' pace: this loop's clock
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		// A probe's own bound: a stopped shard accepts the connection (the
		// kernel does) and answers nothing.
		pctx, cancel := context.WithTimeout(ctx, proto.WaitReportAfter)
		_, err := o.Stats(pctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		now := time.Now()
		if err == nil {
			if d, back := st.answered(now); back {
				log.Info("shard answers again", "silent", d.Round(time.Second))
			}
			continue
		}
		o.Close() // a connection mid-call is of no further use
		if d, ok := st.silent(now); ok {
			log.Warn("shard has not answered the coordinator", "for", d.Round(time.Second), "addr", addr, "err", errSummary(err))
		}
	}
}

// errSummary is err's text, or "no answer" for a probe that timed out.
func errSummary(err error) slog.Value {
	if errors.Is(err, context.DeadlineExceeded) {
		return slog.StringValue("no answer")
	}
	return slog.StringValue(err.Error())
}
