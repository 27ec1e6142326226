package sse

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReader(t *testing.T) {
	long := strings.Repeat("x", 40<<10) // longer than the reader's buffer
	in := ": a comment\r\n" +
		"event: first\r\ndata: one\r\ndata:two\r\n\r\n" +
		"id: 7\nretry: 10\n\n" + // no data: not an event
		"data: " + long + "\n\n" +
		"data: {\"a\":1}\n\n" +
		"data: unterminated"
	// One byte per read: events must not depend on how the body is cut.
	r := NewReader(iotest.OneByteReader(strings.NewReader(in)))
	want := []Event{{Name: "first", Data: []byte("one\ntwo")}, {Data: []byte(long)}, {Data: []byte(`{"a":1}`)}}
	for i, w := range want {
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if ev.Name != w.Name || string(ev.Data) != string(w.Data) {
			t.Errorf("event %d = %q %.40q, want %q %.40q", i, ev.Name, ev.Data, w.Name, w.Data)
		}
	}
	if ev, err := r.Next(); err != io.EOF {
		t.Errorf("after the last event: %q, %v; want io.EOF (an event without its blank line is dropped)", ev.Data, err)
	}
}

func TestReaderBoundsLines(t *testing.T) {
	r := NewReader(io.MultiReader(strings.NewReader("data: "), infiniteX{}))
	if _, err := r.Next(); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("error = %v, want the line refused past the bound", err)
	}
}

func TestReaderBoundsEvents(t *testing.T) {
	line := "data: " + strings.Repeat("x", MaxLine/4) + "\n"
	r := NewReader(io.MultiReader(strings.NewReader(strings.Repeat(line, 5)), strings.NewReader("\n")))
	if _, err := r.Next(); err == nil || !strings.Contains(err.Error(), "data is longer than") {
		t.Errorf("error = %v, want the event refused past the bound", err)
	}
}

type infiniteX struct{}

func (infiniteX) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}
