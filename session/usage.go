package session

import (
	"sync"

	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/wire"
)

// usageTotal is a sum of token counts and what they cost.
type usageTotal struct {
	provider.Usage
	CostUSD float64
	priced  bool // some reply had a known price
}

// meter totals a session's usage: the session's since it was created
// (restored on load) and the current turn's.
type meter struct {
	mu      sync.Mutex // guards the fields below
	session usageTotal
	turn    usageTotal
}

func addUsage(a, b provider.Usage) provider.Usage {
	return provider.Usage{
		InputTokens:      a.InputTokens + b.InputTokens,
		OutputTokens:     a.OutputTokens + b.OutputTokens,
		CacheReadTokens:  a.CacheReadTokens + b.CacheReadTokens,
		CacheWriteTokens: a.CacheWriteTokens + b.CacheWriteTokens,
	}
}

// add counts one reply's usage and returns its cost, if priced.
func (m *meter) add(p provider.Provider, u provider.Usage) (float64, bool) {
	if u == (provider.Usage{}) || p == nil {
		return 0, false
	}
	cost, priced := provider.Cost(p.Name(), p.Model(), u)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range []*usageTotal{&m.session, &m.turn} {
		t.Usage = addUsage(t.Usage, u)
		t.CostUSD += cost
		t.priced = t.priced || priced
	}
	return cost, priced
}

func (m *meter) restore(session usageTotal) {
	m.mu.Lock()
	m.session = session
	m.mu.Unlock()
}

func (m *meter) startTurn() {
	m.mu.Lock()
	m.turn = usageTotal{}
	m.mu.Unlock()
}

func (m *meter) totals() (turn, session usageTotal) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.turn, m.session
}

// shape is the LSP dialect's token counts: the cost only when priced.
func (t usageTotal) shape() wire.Tokens {
	out := wire.Tokens{InputTokens: t.InputTokens, OutputTokens: t.OutputTokens, CacheReadTokens: t.CacheReadTokens}
	if t.priced {
		out.CostUSD = &t.CostUSD
	}
	return out
}

// reportUsage counts a reply's usage, persists it and sends usage_update:
// in the LSP dialect the reply's counts with the turn's and the session's
// totals and the context, in the ACP dialect the schema's UsageUpdate
// (context used and size, the session's cost). raw is the request's
// uncalibrated estimate, which the reply's count calibrates.
func (s *Session) reportUsage(raw int, u provider.Usage) {
	s.tokens.calibrate(raw, u)
	if u == (provider.Usage{}) {
		return
	}
	cost, priced := s.meter.add(s.cfg.Provider, u)
	rec := Record{Type: RecordUsage, Usage: &u}
	if priced {
		rec.CostUSD = cost
	}
	s.persist(rec)
	turn, session := s.meter.totals()
	used, size := s.tokens.inContext(0), s.tokens.size()
	if s.cfg.ACP {
		up := wire.UsageUpdate{Used: used, Size: size}
		if session.priced {
			up.Cost = &wire.Cost{Amount: session.CostUSD, Currency: "USD"}
		}
		s.cfg.Host.Update(up)
		return
	}
	reply := usageTotal{Usage: u, CostUSD: cost, priced: priced}
	s.cfg.Host.Update(wire.ReplyUsage(reply.shape(), turn.shape(), session.shape(), wire.ContextUse{Used: used, Size: size}))
}

// reportTotals sends a loaded session's totals, as restored from its
// history, after its replay: the client's meter shows what the session
// cost so far, not zero until the next reply. A session with no usage
// yet sends nothing.
func (s *Session) reportTotals() {
	_, session := s.meter.totals()
	if session.Usage == (provider.Usage{}) {
		return
	}
	used, size := s.tokens.inContext(0), s.tokens.size()
	if s.cfg.ACP {
		up := wire.UsageUpdate{Used: used, Size: size}
		if session.priced {
			up.Cost = &wire.Cost{Amount: session.CostUSD, Currency: "USD"}
		}
		s.cfg.Host.Update(up)
		return
	}
	s.cfg.Host.Update(wire.ReplyUsage(wire.Tokens{}, wire.Tokens{}, session.shape(), wire.ContextUse{Used: used, Size: size}))
}
