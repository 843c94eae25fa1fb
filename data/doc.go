// Package data loads the training data sets and cuts them into per-worker mini-batches.
//
// # Use
//
//	ds, err := data.Load("fashion-mnist", dataDir) // dataDir is --data-dir, "" if not given
//	b, err := data.NewBatcher(ds.Train, data.BatcherConfig{Worker: w, Workers: n, Batch: 64, Seed: seed})
//	for step := range steps {
//		batch := b.Next() // batch.X is batch.N×Dim, valid until the next call
//		...
//	}
//
// Names are fashion-mnist, mnist, cifar10 and synthetic. Every Set holds pixels/255 as float32,
// row-major (each image channel by channel, row by row: ImageOf gives a set's C×H×W from its
// name, which is what the models are built for), and uint8 labels; Load validates shapes, label range and pixel range before
// returning, so consumers need not re-check.
//
// # Where the files come from
//
// For fashion-mnist (mnist alike) the places are tried in order: the dir argument, $PACER_DATA
// (each either holding the four files or a subdirectory named after the set), ./data/<name>,
// /usr/share/datasets/<name> (Debian's dataset-fashion-mnist), the user cache
// (os.UserCacheDir()/pacer/<name>), and finally a download from the official address into that
// cache. Files may be gzip-compressed (.gz) or plain. If nothing works the error lists every
// place with the reason it failed. cifar10 reads the binary batches (data_batch_1..5.bin,
// test_batch.bin) from the same local places, or their cifar-10-batches-bin subdirectory; it
// has no download.
//
// Files that are found but malformed (bad magic, wrong dimensions, short or trailing data, bad
// gzip, labels out of range) stop the search with an error naming the file instead of falling
// through to the next place: training on other data than the user pointed at would be worse.
//
// # Implementation notes
//
// Downloads stream through an MD5 hash into a temporary file in the cache directory and are
// renamed into place only when the sum matches, so a crash or a bad transfer never leaves a
// file under its final name, and a second run resumes with the files still missing. Loader's
// fields (Client, BaseURL, the directories, Getenv) exist so tests run the whole resolution and
// download path against temporary directories and an httptest server; nothing in the tests
// reaches the network. Debian recompresses the .gz files, so their MD5 differs from the
// download sums; the tests check that the decompressed content matches upstream's instead.
//
// The IDX reader trusts no header. Each file of a known set is bounded by the set's shape
// (MNIST and Fashion-MNIST: 28×28 images, at most 60,000 training and 10,000 test samples),
// checked on the header before any body is read; the four headers are read first and the
// label counts cross-checked against the image counts, so a small gzip file declaring a million
// images is refused after a few hundred kilobytes of buffers. The buffer then grows with the
// bytes actually read. CIFAR-10 batch files are bounded by the real set's 10,000 records each,
// checked on the file's size before it is read. Loader.Info reads only the headers (or sizes):
// what a server shard, which needs only the counts, calls instead of Load. FuzzReadIDX
// exercises the reader and the shape checks (the input gzipped in the target, so the checksum
// is valid and mutations reach the checks); scripts/fuzz-budgets runs it by count:
//
//	go test ./data -run '^$' -fuzz FuzzReadIDX -fuzztime 40000x
//
// Sharding is strided (worker w owns samples w, w+n, w+2n, ...), which keeps shard sizes within
// one and each shard's class mix close to the whole set's. A Batcher's order for an epoch is a
// permutation drawn from (Seed, Worker, epoch) alone, not from the previous epoch's state, so a
// worker restarted with Seek(epoch) reproduces the batches exactly. Next copies rows into
// buffers allocated once, so the training loop does not allocate.
//
// The synthetic set (class-dependent Gaussian clusters around prototypes, 784 features by
// default) is generated from a seed in well under a second and is learnable but not trivially
// so; use it where a test needs learning to happen without the real files.
package data
