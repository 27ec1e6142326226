package rpc

import (
	"github.com/cline-ls/cline-ls/wire"
)

// serveACPLoad serves ACP's session/load. Its cwd becomes a workspace
// folder first, as session/new's does: a client that reopens a thread in a
// fresh daemon (acpx runs each prompt in a new process) has no other way
// to name the folder its tools work in.
func (c *sessions) serveACPLoad(raw []byte) (any, error) {
	var p loadParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if err := required("cwd", p.CWD); err != nil {
		return nil, err
	}
	if err := c.addFolder(p.CWD); err != nil {
		return nil, err
	}
	return c.serveLoad(raw)
}

// absLocations resolves tool-call locations against the workspace
// folders; a path that does not resolve is left as it is.
func (s *Server) absLocations(locs []wire.Location) []wire.Location {
	if len(locs) == 0 {
		return locs
	}
	r, err := s.delivery.Roots()
	if err != nil || r == nil {
		return locs
	}
	out := make([]wire.Location, len(locs))
	for i, l := range locs {
		out[i] = l
		if abs, err := r.Resolve(l.Path); err == nil {
			out[i].Path = abs
		}
	}
	return out
}
