package launch

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
)

// newLogger is a text slog logger on w, or a discarding one.
func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	if w == nil {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// portPlus is addr with its port increased by k (shard k's metrics).
func portPlus(addr string, k int) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("launch: metrics address %q: %w", addr, err)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return "", fmt.Errorf("launch: metrics address %q: port is not a number", addr)
	}
	if n == 0 {
		return addr, nil
	}
	return net.JoinHostPort(host, strconv.Itoa(n+k)), nil
}
