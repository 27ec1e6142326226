package prompt

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// Event is one piece of a model's parsed text: prose, or a tool call.
// Exactly one of Text and Call is set.
type Event struct {
	// Text is prose outside tool calls, passed on as it arrives.
	Text string
	// Call is a complete tool call, or (only from Close) a partial one.
	Call *ToolCall
}

// ToolCall is a tool call written as XML by a model on the text path.
type ToolCall struct {
	Name string
	// Params maps each parameter the model wrote to its raw text value,
	// with one leading and one trailing newline removed. A parameter given
	// twice keeps its last value.
	Params map[string]string
	// Partial marks a call the stream ended inside of. Its values may be
	// cut anywhere, so callers must never execute it: show it, or tell the
	// model its reply was cut off.
	Partial bool
}

// Parser turns a model's streamed text into prose and tool calls. It is
// the text-path counterpart of native tool calling: the system prompt
// documents each tool as <tool><param>value</param></tool>, and the parser
// reads such calls back out of the reply as it streams in.
//
// The grammar is deliberately narrow, so that code and markup a model
// writes are not mistaken for calls:
//   - Outside a call, only <name> for a registered tool name opens a call;
//     anything else, including other tags, is prose.
//   - Inside a call, only <param> for one of that tool's own parameters
//     opens a value, and only </name> closes the call. Text between
//     parameters is dropped.
//   - Inside a value, </param> ends it only when what follows, after
//     optional whitespace, is the opening of a parameter of the same tool
//     or the call's closing tag. Every other occurrence, like </content>
//     inside a file being written, is part of the value. The one text a
//     value cannot hold is its own closing tag followed by whitespace and
//     such a tag.
//
// Tags are exact: no attributes, no spaces. Values are raw text, never
// entity-decoded. Decisions wait for as many bytes as they need, so the
// calls and the concatenated prose do not depend on how the stream was cut
// into chunks; only the text that could still begin a tag is held back.
//
// A Parser is not safe for concurrent use.
type Parser struct {
	tools   map[string]*toolGrammar
	openers tagSet // "<name>" for every tool

	buf   []byte
	pos   int // first byte not yet consumed
	state parseState
	done  bool

	call     *ToolCall
	grammar  *toolGrammar
	param    string
	closeTag []byte // "</param>" of the value being read
	valStart int    // where the value being read starts in buf
	scan     int    // where the search for closeTag resumes

	text strings.Builder // prose collected for the current Feed
	out  []Event
}

type parseState int

const (
	inText parseState = iota
	inCall
	inValue
)

// toolGrammar is what may appear inside one tool's call.
type toolGrammar struct {
	name string
	tags tagSet // "<param>" for each parameter, and "</name>"
}

// tagSet recognises a fixed set of tags and every prefix of them, which is
// what lets the parser hold back exactly the bytes that may still become a
// tag and no more.
type tagSet struct {
	tags     map[string]string // tag → the name it carries
	prefixes map[string]bool
	maxLen   int
}

func newTagSet() tagSet {
	return tagSet{tags: map[string]string{}, prefixes: map[string]bool{}}
}

func (s *tagSet) add(tag, name string) {
	s.tags[tag] = name
	for i := 1; i < len(tag); i++ {
		s.prefixes[tag[:i]] = true
	}
	s.maxLen = max(s.maxLen, len(tag))
}

type matchResult int

const (
	noMatch matchResult = iota
	matched
	needMore
)

// match reports whether b starts with one of the tags. Every tag ends
// with its only '>', so the first '>' decides; without one, b can only be
// the start of a tag if it is a known prefix.
func (s *tagSet) match(b []byte) (tag string, r matchResult) {
	window := b[:min(len(b), s.maxLen)]
	if k := bytes.IndexByte(window, '>'); k >= 0 {
		if _, ok := s.tags[string(b[:k+1])]; ok {
			return string(b[:k+1]), matched
		}
		return "", noMatch
	}
	if len(b) < s.maxLen && s.prefixes[string(b)] {
		return "", needMore
	}
	return "", noMatch
}

// NewParser returns a parser for the given tools, each mapped to the names
// of its parameters (ToolParams builds this from specs).
func NewParser(known map[string][]string) *Parser {
	p := &Parser{tools: map[string]*toolGrammar{}, openers: newTagSet()}
	for name, params := range known {
		g := &toolGrammar{name: name, tags: newTagSet()}
		for _, param := range params {
			g.tags.add("<"+param+">", param)
		}
		g.tags.add("</"+name+">", "")
		p.tools[name] = g
		p.openers.add("<"+name+">", name)
	}
	return p
}

// Feed parses the next chunk of the stream and returns the prose and the
// complete calls it settles, in stream order.
func (p *Parser) Feed(chunk string) []Event {
	if p.done {
		return nil
	}
	p.buf = append(p.buf, chunk...)
	p.run(false)
	return p.flush()
}

// Close ends the stream: held-back bytes that never became a tag are
// prose, and a call left open is returned with Partial set. Feed and Close
// do nothing after Close.
func (p *Parser) Close() []Event {
	if p.done {
		return nil
	}
	p.run(true)
	p.done = true
	if p.call != nil {
		if p.state == inValue {
			p.setParam(p.buf[p.valStart:])
		}
		p.call.Partial = true
		p.emitCall()
	}
	return p.flush()
}

// Pending returns the call being read, with the value in progress as far
// as it has arrived, so a client can preview it (a file being written,
// say). The snapshot is for display only, like a partial call.
func (p *Parser) Pending() (ToolCall, bool) {
	if p.call == nil {
		return ToolCall{}, false
	}
	c := ToolCall{Name: p.call.Name, Params: make(map[string]string, len(p.call.Params)+1), Partial: true}
	for k, v := range p.call.Params {
		c.Params[k] = v
	}
	if p.state == inValue {
		c.Params[p.param] = trimNewlines(string(p.buf[p.valStart:]))
	}
	return c, true
}

// run consumes as much of buf as can be decided. With eof set, whatever
// is undecided is settled as if nothing more will come.
func (p *Parser) run(eof bool) {
	for {
		var progress bool
		switch p.state {
		case inText:
			progress = p.stepText(eof)
		case inCall:
			progress = p.stepCall(eof)
		case inValue:
			progress = p.stepValue(eof)
		}
		if !progress {
			break
		}
	}
	p.compact()
}

func (p *Parser) stepText(eof bool) bool {
	rest := p.buf[p.pos:]
	i := bytes.IndexByte(rest, '<')
	if i < 0 {
		// Hold back a rune cut by the chunk boundary, so that every text
		// event is valid UTF-8 when the stream is.
		n := len(rest)
		if !eof {
			n -= incompleteRuneSuffix(rest)
		}
		p.text.Write(rest[:n])
		p.pos += n
		return false
	}
	p.text.Write(rest[:i])
	p.pos += i
	tag, r := p.openers.match(p.buf[p.pos:])
	switch {
	case r == matched:
		p.pos += len(tag)
		p.grammar = p.tools[p.openers.tags[tag]]
		p.call = &ToolCall{Name: p.grammar.name, Params: map[string]string{}}
		p.state = inCall
	case r == needMore && !eof:
		return false
	default:
		p.text.WriteByte('<')
		p.pos++
	}
	return true
}

func (p *Parser) stepCall(eof bool) bool {
	i := bytes.IndexByte(p.buf[p.pos:], '<')
	if i < 0 {
		p.pos = len(p.buf) // text between parameters is dropped
		return false
	}
	p.pos += i
	tag, r := p.grammar.tags.match(p.buf[p.pos:])
	switch {
	case r == matched:
		p.pos += len(tag)
		if param := p.grammar.tags.tags[tag]; param != "" {
			p.param = param
			p.closeTag = []byte("</" + param + ">")
			p.valStart = p.pos
			p.scan = p.pos
			p.state = inValue
		} else {
			p.emitCall()
			p.state = inText
		}
	case r == needMore && !eof:
		return false
	default:
		p.pos++
	}
	return true
}

func (p *Parser) stepValue(eof bool) bool {
	k := bytes.Index(p.buf[p.scan:], p.closeTag)
	if k < 0 {
		// Keep the bytes that may be the start of the closing tag.
		p.scan = max(p.scan, len(p.buf)-len(p.closeTag)+1)
		return false
	}
	at := p.scan + k
	after := at + len(p.closeTag)
	j := after
	for j < len(p.buf) && isSpace(p.buf[j]) {
		j++
	}
	// At the end of the stream a closing tag followed by nothing, or by a
	// cut-off tag, is taken as closing: the call is partial either way.
	r := needMore
	if j < len(p.buf) {
		_, r = p.grammar.tags.match(p.buf[j:])
	}
	switch {
	case r == matched || (r == needMore && eof):
		p.setParam(p.buf[p.valStart:at])
		p.pos = after
		p.state = inCall
	case r == needMore:
		p.scan = at
		return false
	default:
		p.scan = at + 1 // this closing tag is part of the value
	}
	return true
}

func (p *Parser) setParam(value []byte) {
	p.call.Params[p.param] = trimNewlines(string(value))
}

func (p *Parser) emitCall() {
	p.flushText()
	p.out = append(p.out, Event{Call: p.call})
	p.call, p.grammar, p.param, p.closeTag = nil, nil, "", nil
}

func (p *Parser) flushText() {
	if p.text.Len() > 0 {
		p.out = append(p.out, Event{Text: p.text.String()})
		p.text.Reset()
	}
}

func (p *Parser) flush() []Event {
	p.flushText()
	out := p.out
	p.out = nil
	return out
}

// compact drops consumed bytes so a long stream does not keep its whole
// text; a value being read keeps its start, which is pos.
func (p *Parser) compact() {
	if p.pos == 0 {
		return
	}
	n := copy(p.buf, p.buf[p.pos:])
	p.buf = p.buf[:n]
	p.valStart -= p.pos
	p.scan -= p.pos
	p.pos = 0
}

// incompleteRuneSuffix returns how many bytes at the end of b are the
// start of a multi-byte UTF-8 sequence still missing bytes.
func incompleteRuneSuffix(b []byte) int {
	for n := 1; n <= min(len(b), utf8.UTFMax-1); n++ {
		c := b[len(b)-n]
		if utf8.RuneStart(c) {
			if c >= utf8.RuneSelf && !utf8.FullRune(b[len(b)-n:]) {
				return n
			}
			return 0
		}
	}
	return 0
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// trimNewlines removes one leading and one trailing newline ("\n" or
// "\r\n"): models put tags on lines of their own, and the value is what
// lies between those lines. Other whitespace is kept, since indentation
// can matter in code.
func trimNewlines(s string) string {
	if strings.HasPrefix(s, "\r\n") {
		s = s[2:]
	} else if strings.HasPrefix(s, "\n") {
		s = s[1:]
	}
	if strings.HasSuffix(s, "\r\n") {
		s = s[:len(s)-2]
	} else if strings.HasSuffix(s, "\n") {
		s = s[:len(s)-1]
	}
	return s
}
