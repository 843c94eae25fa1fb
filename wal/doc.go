// Package wal is a shard's write-ahead log: the gradients (and the few
// other events) a shard accepted since its last checkpoint, made durable
// before the push is acknowledged, so that a shard killed at any moment
// restarts at the last version it acknowledged.
//
// # Use
//
// A writer appends records (Log.Append, cheap: it only encodes into a
// bounded buffer) and, before it acknowledges anything, waits for them to
// be on disk (Log.Sync). Sync is a group commit: concurrent callers share
// one write and one fsync, the first to arrive doing the I/O while the
// others wait for it, and whatever was appended meanwhile goes out with
// the next one. At a checkpoint the writer starts a new segment
// (Log.Rotate), writes the checkpoint with that segment's number, and
// once the checkpoint is durable deletes the older segments
// (Log.RemoveBefore). On restart Replay reads the segments from the
// checkpoint's number on, in order.
//
// # Files
//
// A directory of segments named %016x.wal (mode 0600: they hold
// gradients), numbered without gaps from the one the log began with
// (Start marks it its origin). The directory is made together with its
// first segment (built beside it and renamed), so a log directory without
// segments is one whose segments were deleted. Little-endian throughout:
//
//	segment header (44 bytes)
//	  magic   8   "PACERWL1"
//	  version 4   2
//	  flags   4   1: the log's origin segment
//	  seq     8   the segment's number (must match its name)
//	  crc     4   CRC-32C of the 24 bytes above
//	  marker, rewritten in place:
//	  end     8   the synced end: every byte before it was on disk
//	  state   4   0 open, 1 sealed (a later segment exists)
//	  crc     4   CRC-32C of seq, end and state
//	records, each
//	  len     4   body length
//	  crc     4   CRC-32C of the body
//	  body    len
//	    kind u8, flags u8, 2 bytes zero, worker i32, clock u64,
//	    read u64, now i64, nints u32, nfloats u32,
//	    ints nints×i32, floats nfloats×f32
//
// # Damage
//
// The writer rewrites a segment's marker after each fsync (not before,
// and without an fsync of its own): it never claims a byte that is not on
// disk, it is exact after a kill (the page cache holds it), and after a
// power cut it lags by at most the last group commit. Only the bytes after
// the synced end of the last segment can be torn by a crash, and no
// acknowledged record lies there: Replay cuts a damaged record there and
// everything after it off; a last segment whose header is incomplete
// (made, killed before its header was durable) never held a record and is
// removed. Damage before the synced end, or anywhere in
// an earlier segment (Rotate syncs a segment whole before the next one
// begins), a segment shorter than its synced end, a record that crosses
// it, and a missing segment (a gap; the checkpoint's segment; the
// successor of a sealed last segment; anything before the origin when
// replaying the whole log) are corruption: Replay returns an error
// wrapping ErrCorrupt that names the segment, the record's index and its
// offset, and changes no file. No file can make the reader allocate more
// than Options' bounds.
//
// # Failures
//
// A write or fsync that fails (a full disk) stops the log: every Sync
// returns the error until Recover cuts the segment back to its synced end
// and drops the records appended since (their Sync returns ErrDropped).
// The writer can then go on in the same segment once the disk takes
// writes again.
package wal
