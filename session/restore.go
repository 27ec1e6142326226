package session

import "github.com/cline-ls/cline-ls/provider"

// Restored is what a saved session's records come to: the state a live
// session had when it last persisted.
type Restored struct {
	History []provider.Message
	Mode    string
	Title   string
	Plan    []PlanEntry
}

// Restore replays a saved session's records into its state. Later
// records of a kind replace earlier ones, as they did live.
func Restore(meta Meta, recs []Record) Restored {
	r := Restored{Mode: meta.Mode, Title: meta.Title}
	for _, rec := range recs {
		switch rec.Type {
		case RecordMessage:
			if rec.Message != nil {
				r.History = append(r.History, *rec.Message)
			}
		case RecordMode:
			r.Mode = rec.Mode
		case RecordTitle:
			r.Title = rec.Title
		case RecordPlan:
			r.Plan = rec.Plan
		}
	}
	return r
}
