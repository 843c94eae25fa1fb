package live

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/wire"
)

// This file: what a server knows about the job that bounds every number a
// peer may send it (worker ids, versions, clocks, counts). docs/protocol.md
// ("What each server checks") lists the checks per frame type.

// maxStaleness is the last bucket of a shard's staleness histogram: a
// gradient staler than this (never seen in a real job) is counted there.
const maxStaleness = 1<<16 - 1

// maxWorkers bounds worker ids so a bad frame cannot make a shard or the
// coordinator grow its per-worker tables without limit.
const maxWorkers = 1 << 16

// idCap is the number of worker ids the job admits: its K workers and up
// to K+64 joins (--id −1) beyond them. Every per-worker table (the
// coordinator's members, a shard's membership, the aggregators' rounds) is
// bounded by it, whatever a frame names. It counts ids, not processes:
// ids are keyed by incarnation (membership.Table.Hello), a removed join's
// id goes to a later join, and its earlier process, back, is given a
// fresh id within the same cap (or refused as unavailable until one is
// free), so no churn of processes makes more.
func idCap(p *job.Description) int { return min(2*p.Job.Workers+64, maxWorkers) }

// inFlight is B, the job's bound on updates a shard can have made that its
// checkpoint does not prove. Every update takes at least one push, and a
// push a shard applied is either counted by the coordinator (the job ends
// after T = p.Pushes() of them) or not: in flight when the job ended, or
// offered again after a restart of the shard. A worker has one push in
// flight at a time, and only the process that has an id pushes under it
// (a shard takes a data connection per id, the newest; a process given a
// fresh id redials its links under that one before it pushes again): so
// those are at most one each per id, 2·idCap, however often ids are
// recycled. B = T + 2·idCap. A version or clock a worker names beyond
// what the shard can prove plus B is refused.
//
// Not counted anywhere: the push of a process that died, or was given a
// fresh id, between its push and its report (under the fresh id that
// report is a retry: the old id's count went with the id). Each needs
// its id removed first, a heartbeat timeout of silence. What a restarted
// shard cannot prove is the updates since its checkpoint, counted (at
// most T) and not; only more than 2·idCap such deaths after the
// checkpoint, in a job whose every counted push also came after it, put
// a version a worker holds beyond B, and that worker is refused.
func inFlight(p *job.Description) uint64 { return uint64(p.Pushes()) + 2*uint64(idCap(p)) }

// maxControlBytes bounds a Control frame's JSON: a membership view lists
// every admitted id once (at most 11 bytes each).
func maxControlBytes(p *job.Description) int { return 4<<10 + 12*idCap(p) }

// checkHeld checks a version a worker says it holds (a push's read version,
// a pull's or heartbeat's held version) against what the shard can have
// published (lock held). Within one incarnation a worker never holds more
// than the shard's version; a shard started with --restore may have lost
// versions it had published, so it accepts up to what its checkpoint
// proves, plus its own updates since, plus B, and skips forward to it.
func (s *Shard) checkHeld(what string, held uint64) error {
	v := s.agg.Version()
	if held <= v {
		return nil
	}
	if !s.restarted {
		return remoteErr(wire.CodeBadRequest, "%s %d is beyond shard %d's version %d, and this shard has not restarted", what, held, s.idx, v)
	}
	if lim := s.provable() + inFlight(s.params); held > lim {
		return remoteErr(wire.CodeBadRequest, "%s %d is beyond what shard %d can have published (%d: checkpoint version %d, %d updates since, in-flight bound %d)",
			what, held, s.idx, lim, s.stats.RestoredVersion, s.stats.Updates, inFlight(s.params))
	}
	return nil
}

// provable is the largest version the shard can prove it reached: its
// checkpoint's, plus the updates it applied itself since (skips do not
// count, or a worker could ratchet the version up B at a time).
func (s *Shard) provable() uint64 { return s.stats.RestoredVersion + uint64(s.stats.Updates) }

// checkAhead checks a version or clock a worker expects next (a pull's
// minimum version, a push's clock) (lock held): at most one round past the
// version the shard may skip to.
func (s *Shard) checkAhead(what string, x uint64) error {
	lim := max(s.agg.Version(), s.provable()) + inFlight(s.params) + 1
	if x > lim {
		return remoteErr(wire.CodeBadRequest, "%s %d is beyond shard %d's version %d plus the job's in-flight bound %d",
			what, x, s.idx, s.agg.Version(), inFlight(s.params))
	}
	return nil
}

// idRanges renders a set of ids compactly ("0-2,5").
func idRanges(m map[int]bool) string {
	ids := make([]int, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b strings.Builder
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", ids[i], ids[j])
		} else {
			fmt.Fprintf(&b, "%d", ids[i])
		}
		i = j + 1
	}
	return b.String()
}

// checkView checks a membership view from the coordinator link: ids within
// the job's bound, each listed once.
func checkView(live, removed []int, idCap int) error {
	if len(live)+len(removed) > idCap {
		return remoteErr(wire.CodeBadRequest, "membership view lists %d ids; the job admits at most %d", len(live)+len(removed), idCap)
	}
	seen := make(map[int]bool, len(live)+len(removed))
	for _, l := range [][]int{live, removed} {
		for _, p := range l {
			if p < 0 || p >= idCap {
				return remoteErr(wire.CodeBadRequest, "membership view names worker %d outside [0, %d)", p, idCap)
			}
			if seen[p] {
				return remoteErr(wire.CodeBadRequest, "membership view lists worker %d twice", p)
			}
			seen[p] = true
		}
	}
	return nil
}
