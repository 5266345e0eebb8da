package agent

import (
	"context"
)

// Close is Shutdown bounded by ShutdownTimeout.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	s.Shutdown(ctx)
}
