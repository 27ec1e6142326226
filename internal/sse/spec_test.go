package sse

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// specCases follow the event-stream parsing rules of the HTML standard
// (§9.2.6): how lines end, which fields count, when an event is
// dispatched and what the reader remembers between events.
var specCases = []struct {
	name  string
	in    string
	want  []Event
	id    string        // the last event ID after the stream
	retry time.Duration // -1: no retry set
}{
	{"LF line ends", "data: a\n\n", []Event{{Data: []byte("a")}}, "", -1},
	{"CRLF line ends", "data: a\r\n\r\n", []Event{{Data: []byte("a")}}, "", -1},
	{"bare CR line ends", "data: a\rdata: b\r\rdata: c\r\r", []Event{{Data: []byte("a\nb")}, {Data: []byte("c")}}, "", -1},
	{"mixed line ends", "data: a\r\ndata: b\rdata: c\n\r\n", []Event{{Data: []byte("a\nb\nc")}}, "", -1},
	{"CR then LF is one line end, not two", "data: a\r\ndata: b\r\n\r\n", []Event{{Data: []byte("a\nb")}}, "", -1},
	{"leading byte order mark dropped", "\uFEFFdata: first\n\n", []Event{{Data: []byte("first")}}, "", -1},
	{"only the first BOM is dropped", "\uFEFFdata: a\n\n\uFEFFdata: b\n\n", []Event{{Data: []byte("a")}}, "", -1},
	{"data lines joined by LF", "data: one\ndata: two\ndata: three\n\n", []Event{{Data: []byte("one\ntwo\nthree")}}, "", -1},
	{"one space after the colon dropped, not two", "data:  a\ndata:b\n\n", []Event{{Data: []byte(" a\nb")}}, "", -1},
	{"empty data line keeps its place", "data\ndata\n\n", []Event{{Data: []byte("\n")}}, "", -1},
	{"data with nothing after the colon", "data:\n\n", []Event{{Data: []byte("")}}, "", -1},
	{"field without a colon is the whole line", "event\ndata: x\n\n", []Event{{Data: []byte("x")}}, "", -1},
	{"comments are skipped", ": hello\ndata: a\n:another\n\n", []Event{{Data: []byte("a")}}, "", -1},
	{"unknown fields are skipped", "foo: bar\ndata: a\nDATA: b\n\n", []Event{{Data: []byte("a")}}, "", -1},
	{"event names the event; forgotten after dispatch", "event: add\ndata: 1\n\ndata: 2\n\n", []Event{{Name: "add", Data: []byte("1")}, {Data: []byte("2")}}, "", -1},
	{"no data, no event; its name is forgotten", "event: add\n\ndata: 2\n\n", []Event{{Data: []byte("2")}}, "", -1},
	{"id is kept for the following events", "id: 7\ndata: a\n\ndata: b\n\n", []Event{{Data: []byte("a"), ID: "7"}, {Data: []byte("b"), ID: "7"}}, "7", -1},
	{"id set without data still counts", "id: 3\n\ndata: a\n\n", []Event{{Data: []byte("a"), ID: "3"}}, "3", -1},
	{"empty id clears it", "id: 3\ndata: a\n\nid\ndata: b\n\n", []Event{{Data: []byte("a"), ID: "3"}, {Data: []byte("b")}}, "", -1},
	{"id with NUL is ignored", "id: 3\ndata: a\n\nid: 4\x005\ndata: b\n\n", []Event{{Data: []byte("a"), ID: "3"}, {Data: []byte("b"), ID: "3"}}, "3", -1},
	{"retry in digits is kept", "retry: 2500\ndata: a\n\n", []Event{{Data: []byte("a")}}, "", 2500 * time.Millisecond},
	{"retry not all digits is ignored", "retry: 25x\nretry: -1\nretry: 1.5\nretry:\ndata: a\n\n", []Event{{Data: []byte("a")}}, "", -1},
	{"last event without a blank line is dropped at the end", "data: a\n\ndata: b\n", []Event{{Data: []byte("a")}}, "", -1},
	{"last line without a line end is dropped", "data: a\n\ndata: b", []Event{{Data: []byte("a")}}, "", -1},
	{"blank lines alone dispatch nothing", "\n\n\r\n\r\r", nil, "", -1},
	{"a colon in the value stays", "data: a:b: c\n\n", []Event{{Data: []byte("a:b: c")}}, "", -1},
	{"field names are case-sensitive", "Event: x\ndata: a\n\n", []Event{{Data: []byte("a")}}, "", -1},
}

func TestSpecCases(t *testing.T) {
	passed := 0
	for _, c := range specCases {
		for _, cut := range []struct {
			name string
			r    func(string) io.Reader
		}{
			{"whole", func(s string) io.Reader { return strings.NewReader(s) }},
			// One byte per read splits every CRLF across two reads.
			{"bytewise", func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) }},
		} {
			t.Run(c.name+"/"+cut.name, func(t *testing.T) {
				r := NewReader(cut.r(c.in))
				var got []Event
				for {
					ev, err := r.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					ev.Data = bytes.Clone(ev.Data)
					got = append(got, ev)
				}
				if len(got) != len(c.want) {
					t.Fatalf("events %q, want %q", got, c.want)
				}
				for i := range got {
					if got[i].Name != c.want[i].Name || !bytes.Equal(got[i].Data, c.want[i].Data) || got[i].ID != c.want[i].ID {
						t.Errorf("event %d = %q, want %q", i, got[i], c.want[i])
					}
				}
				if r.LastEventID() != c.id {
					t.Errorf("last event ID %q, want %q", r.LastEventID(), c.id)
				}
				retry, ok := r.Retry()
				if want := c.retry; want < 0 && ok || want >= 0 && (!ok || retry != want) {
					t.Errorf("retry %v %v, want %v", retry, ok, want)
				}
				if !t.Failed() && cut.name == "whole" {
					passed++
				}
			})
		}
	}
	t.Logf("event-stream parsing cases: %d of %d pass", passed, len(specCases))
}

// TestCRDoesNotWait checks that a line ended by a bare CR is handed over
// at once: the reader must not wait for the next byte to learn whether an
// LF follows, or an event ended by CR CR would stall until more came.
func TestCRDoesNotWait(t *testing.T) {
	pr, pw := io.Pipe()
	go pw.Write([]byte("data: a\r\r"))
	ev, err := NewReader(pr).Next()
	if err != nil || string(ev.Data) != "a" {
		t.Fatalf("got %q, %v; want the event before any further byte", ev.Data, err)
	}
	pw.Close()
}
