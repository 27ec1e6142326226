package sse

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"
)

// FuzzReader checks that the event reader never fails on any input
// other than by ending, and that the events do not depend on how the body
// was cut into reads.
func FuzzReader(f *testing.F) {
	for _, seed := range []string{
		"data: {\"a\":1}\n\n",
		"event: message_start\r\ndata: {}\r\n\r\n",
		": comment\ndata: a\ndata: b\n\nid: 1\n\n",
		"data:no space\n\ndata: cut",
		"\n\n\r\n",
		"\uFEFFid: 1\rretry: 5\rdata: a\r\r",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		whole := readAllEvents(t, bytes.NewReader(in))
		bytewise := readAllEvents(t, iotest.OneByteReader(bytes.NewReader(in)))
		if len(whole) != len(bytewise) {
			t.Fatalf("%d events read whole, %d read byte by byte", len(whole), len(bytewise))
		}
		for i := range whole {
			if whole[i].Name != bytewise[i].Name || whole[i].ID != bytewise[i].ID || !bytes.Equal(whole[i].Data, bytewise[i].Data) {
				t.Fatalf("event %d differs: %q %q vs %q %q", i, whole[i].Name, whole[i].Data, bytewise[i].Name, bytewise[i].Data)
			}
		}
		var data int
		for _, ev := range whole {
			data += len(ev.Data)
		}
		if data > len(in) {
			t.Fatalf("events hold %d bytes of data from %d bytes of input", data, len(in))
		}
	})
}

func readAllEvents(t *testing.T, r io.Reader) []Event {
	t.Helper()
	s := NewReader(r)
	var evs []Event
	for {
		ev, err := s.Next()
		if err == io.EOF {
			return evs
		}
		if err != nil {
			t.Fatalf("error on an in-memory body: %v", err)
		}
		ev.Data = bytes.Clone(ev.Data)
		evs = append(evs, ev)
	}
}
