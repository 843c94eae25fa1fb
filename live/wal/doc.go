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
// A directory of segments named %016x.wal, numbered from 1 without gaps.
// Little-endian throughout:
//
//	segment header (36 bytes)
//	  magic   8   "PACERWL1"
//	  version 4   1
//	  flags   4   0
//	  seq     8   the segment's number (must match its name)
//	  window  8   bytes the writer may have written without an fsync
//	  crc     4   CRC-32C of the 32 bytes above
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
// Only bytes written since the last fsync can be lost or torn by a crash,
// and the writer never has more than the header's window of them. A record
// that is incomplete or fails its checksum within that window of the end
// of the last segment is a torn tail: Replay stops there and truncates the
// segment to its last whole record (no acknowledged record can lie in it).
// Damage anywhere else is corruption: Replay returns an error wrapping
// ErrCorrupt that names the segment, the record's index and its offset.
// No file can make the reader allocate more than Options' bounds.
package wal
