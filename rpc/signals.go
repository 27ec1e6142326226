package rpc

import (
	"os"
	"os/signal"
)

// catchSignals makes Options.Signals end serving gracefully. It runs once,
// with the first message after initialize (or the first MCP server, which
// initialize may start): every session, child and checkpoint comes from a
// later message, so until then there is nothing to save and a signal's
// default action, the end of the process, loses nothing. Not catching
// them earlier keeps off the path to the initialize answer what catching
// costs the runtime at its first signal.Notify: a goroutine on a locked
// thread of its own, and a template thread besides.
func (s *Server) catchSignals() {
	s.sigOnce.Do(func() {
		if len(s.opts.Signals) == 0 || s.endServe == nil {
			return
		}
		c := make(chan os.Signal, 1)
		signal.Notify(c, s.opts.Signals...)
		started := s.ws.Go(func() {
			// Caught until serving ends: a second signal during the
			// flush does not cut it short.
			defer signal.Stop(c)
			select {
			case sig := <-c:
				s.log.Info("ending on a signal", "signal", sig.String())
				s.endServe()
				<-s.bgCtx.Done()
			case <-s.bgCtx.Done():
			}
		})
		if !started {
			signal.Stop(c) // the server is closing already
		}
	})
}
