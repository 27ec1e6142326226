package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cline-ls/cline-ls/toolspec"
	"github.com/google/jsonschema-go/jsonschema"
)

// ValidationError is returned by Tool.Build when a call's arguments do not
// fit the tool's schema. Its text is meant for the model: one line per
// problem, each naming the field, so the next call can be fixed.
type ValidationError struct {
	Tool     string
	Problems []Problem
}

// Problem is one field-level fault in a call's arguments.
type Problem struct {
	// Path names the field as files[0].path; empty for the whole input.
	Path    string
	Message string
}

// String renders the problem as "path: message".
func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// Error lists every problem, one per line.
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("Invalid arguments for ")
	b.WriteString(e.Tool)
	b.WriteString(":")
	for _, p := range e.Problems {
		b.WriteString("\n- ")
		b.WriteString(p.String())
	}
	return b.String()
}

// validator checks arguments against one tool's schema. It is built once
// per tool and only read after.
type validator struct {
	tool string
	argSchema
}

// argSchema is a schema read twice. github.com/google/jsonschema-go
// compiles it and decides whether a value fits (judge); our own reading
// (schema) fixes what models commonly get wrong before that, and says in
// the model's terms what to change after. The verdict is always the
// library's: our reading may pass over keywords or read them loosely, so
// it never accepts or refuses a value on its own, with one exception, a
// key that names a property in another case (misCased).
type argSchema struct {
	schema *schema
	tree   *toolspec.Node // the schema's JSON in source order, for the converters
	// judged compiles the schema with the library on first use (a
	// schema costs a millisecond or so, and most tools offered are never
	// called). Its Resolved is nil when the library cannot compile the
	// schema; the arguments then pass unchecked and the error says why.
	judged func() (*jsonschema.Resolved, error)
}

// uncompiled says why the library cannot compile the schema, or nil.
func (a *argSchema) uncompiled() error {
	_, err := a.judged()
	return err
}

// newValidator reads a tool's schema. Only a schema that is not JSON, or
// whose type is not object (no call could fit it), is refused; one the
// library cannot compile gives a validator that checks nothing, so that
// an MCP tool is still offered (the server checks its own arguments).
func newValidator(tool string, params json.RawMessage) (*validator, error) {
	if len(bytes.TrimSpace(params)) == 0 {
		params = json.RawMessage(`{"type":"object"}`)
	}
	a, err := compileSchema(params, nil)
	if err != nil {
		return nil, fmt.Errorf("tools: schema of %s: %w", tool, err)
	}
	if s := a.schema; s.Type != "" && s.Type != "object" {
		return nil, fmt.Errorf("tools: schema of %s: type is %q, want \"object\"", tool, s.Type)
	}
	return &validator{tool: tool, argSchema: a}, nil
}

// compileSchema reads a schema for validation. Remote references are
// resolved through load only (nil: none is, and such a schema is not
// compiled); the daemon never fetches a schema from the network.
func compileSchema(raw json.RawMessage, load jsonschema.Loader) (argSchema, error) {
	tree, err := toolspec.Parse(raw)
	if err != nil {
		return argSchema{}, err
	}
	a := argSchema{tree: tree}
	if a.schema, err = parseSchema(tree); err != nil {
		// A keyword of the wrong shape: nothing to coerce or explain
		// with; the library, which reads the same keywords, will refuse
		// it too.
		a.schema = &schema{}
	}
	a.judged = sync.OnceValues(func() (*jsonschema.Resolved, error) { return judgeOf(raw, load) })
	return a, nil
}

// judgeOf compiles a schema with jsonschema-go, which reads drafts 7 and
// 2020-12. Older drafts are lifted to them first: their boolean
// exclusiveMinimum and exclusiveMaximum become numbers, and a $schema the
// library does not know is dropped (it then reads 2020-12). A pattern Go's
// regexp cannot compile (lookahead and the like) is left out, so the rest
// is still checked.
func judgeOf(raw json.RawMessage, load jsonschema.Loader) (*jsonschema.Resolved, error) {
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	if m, ok := doc.(map[string]any); ok {
		if v, ok := m["$schema"].(string); ok && !knownDraft(v) {
			delete(m, "$schema")
		}
	}
	hoistForeignTargets(doc)
	liftOldDraft(doc, 0)
	lifted, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(lifted, &s); err != nil {
		return nil, err
	}
	dropGoUnreadablePatterns(&s, 0)
	return s.Resolve(&jsonschema.ResolveOptions{Loader: load})
}

func knownDraft(v string) bool {
	switch v {
	case "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#",
		"https://json-schema.org/draft/2020-12/schema":
		return true
	}
	return false
}

// schemaMaps, schemaOnes and schemaLists are the keywords whose values
// hold subschemas: a map of them, one, or a list.
var (
	schemaMaps  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
	schemaOnes  = []string{"items", "additionalItems", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
	schemaLists = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
)

// liftOldDraft rewrites draft 4's boolean exclusiveMinimum and
// exclusiveMaximum, in place, as the numbers later drafts use.
func liftOldDraft(doc any, depth int) {
	m, ok := doc.(map[string]any)
	if !ok || depth > maxExplainDepth {
		return
	}
	for _, pair := range [][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
		if b, ok := m[pair[0]].(bool); ok {
			delete(m, pair[0])
			if n, ok := m[pair[1]].(float64); ok && b {
				delete(m, pair[1])
				m[pair[0]] = n
			}
		}
	}
	// A type JSON Schema does not name ("any", "file"): the server knows
	// what it meant, so it constrains nothing.
	switch t := m["type"].(type) {
	case string:
		if !jsonTypeName(t) {
			delete(m, "type")
		}
	case []any:
		for _, n := range t {
			if n, ok := n.(string); ok && !jsonTypeName(n) {
				delete(m, "type")
				break
			}
		}
	}
	eachSubschema(m, func(sub any) { liftOldDraft(sub, depth+1) })
}

func jsonTypeName(t string) bool {
	switch t {
	case "null", "boolean", "integer", "number", "string", "array", "object":
		return true
	}
	return false
}

// hoistForeignTargets copies into $defs the targets of local references
// that point outside any schema keyword ("#/components/schemas/Size", as
// OpenAPI writes them), and points the references there: the library
// follows a pointer through schema keywords only. Our own reading follows
// the original pointer. Only schemas are walked, never the values of
// enum, const or default, where "$ref" is data.
func hoistForeignTargets(doc any) {
	root, ok := doc.(map[string]any)
	if !ok {
		return
	}
	hoisted := map[string]string{}
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		m, ok := v.(map[string]any)
		if !ok || depth > maxExplainDepth {
			return
		}
		if ref, ok := m["$ref"].(string); ok && strings.HasPrefix(ref, "#/") {
			first, _, _ := strings.Cut(ref[2:], "/")
			if !slices.Contains(schemaMaps, first) && !slices.Contains(schemaOnes, first) && !slices.Contains(schemaLists, first) {
				name, done := hoisted[ref]
				if target, ok := pointerTarget(root, ref[1:]); ok && !done {
					name = "cline-ls-hoisted-" + strconv.Itoa(len(hoisted))
					hoisted[ref] = name
					defs, _ := root["$defs"].(map[string]any)
					if defs == nil {
						defs = map[string]any{}
						root["$defs"] = defs
					}
					defs[name] = target
					walk(target, depth+1)
				}
				if name != "" {
					m["$ref"] = "#/$defs/" + name
				}
			}
		}
		eachSubschema(m, func(sub any) { walk(sub, depth+1) })
	}
	walk(root, 0)
}

// eachSubschema calls fn with each subschema a schema holds directly.
func eachSubschema(m map[string]any, fn func(any)) {
	for _, k := range schemaMaps {
		if sub, ok := m[k].(map[string]any); ok {
			for _, name := range sortedKeys(sub) {
				fn(sub[name])
			}
		}
	}
	for _, k := range schemaOnes {
		if _, ok := m[k].(map[string]any); ok {
			fn(m[k])
		}
	}
	for _, k := range schemaLists {
		if list, ok := m[k].([]any); ok {
			for _, v := range list {
				fn(v)
			}
		}
	}
}

// pointerTarget follows a JSON pointer (RFC 6901) through decoded JSON.
func pointerTarget(root any, ptr string) (any, bool) {
	ptr, err := url.PathUnescape(ptr)
	if err != nil {
		return nil, false
	}
	v := root
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = c[tok]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// dropGoUnreadablePatterns clears the patterns Go's regexp cannot
// compile; a patternProperties member whose pattern it cannot compile
// becomes one matching every name with no constraint, so that no name is
// refused as additional because of it. Our own reading still describes
// the pattern to the model.
func dropGoUnreadablePatterns(s *jsonschema.Schema, depth int) {
	if s == nil || depth > maxExplainDepth {
		return
	}
	if s.Pattern != "" {
		if _, err := regexp.Compile(s.Pattern); err != nil {
			s.Pattern = ""
		}
	}
	for p := range s.PatternProperties {
		if _, err := regexp.Compile(p); err != nil {
			delete(s.PatternProperties, p)
			s.PatternProperties[""] = &jsonschema.Schema{}
		}
	}
	for _, m := range []map[string]*jsonschema.Schema{s.Properties, s.PatternProperties, s.Defs, s.Definitions, s.DependentSchemas, s.DependencySchemas} {
		for _, sub := range m {
			dropGoUnreadablePatterns(sub, depth+1)
		}
	}
	for _, sub := range []*jsonschema.Schema{s.Items, s.AdditionalItems, s.AdditionalProperties, s.Not, s.If, s.Then, s.Else,
		s.Contains, s.PropertyNames, s.UnevaluatedItems, s.UnevaluatedProperties, s.ContentSchema} {
		dropGoUnreadablePatterns(sub, depth+1)
	}
	for _, list := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf, s.PrefixItems, s.ItemsArray} {
		for _, sub := range list {
			dropGoUnreadablePatterns(sub, depth+1)
		}
	}
}

// problems says what is wrong with a value; none means it fits.
func (a *argSchema) problems(val any) []Problem {
	probs := misCased(a.schema, val, "", 0)
	judge, _ := a.judged()
	if judge == nil {
		return probs
	}
	if !affordable(a.schema, val) {
		// The library walks every alternative with no bound; on a
		// recursive schema that is exponential in the value's depth. Our
		// own bounded walk judges such a call, as it did before the
		// library.
		return append(probs, explain(a.schema, val)...)
	}
	err := judge.Validate(val)
	if err == nil {
		return probs
	}
	more := explain(a.schema, val)
	if len(more) == 0 {
		// A keyword our reading passes over (uniqueItems, contains,
		// if/then, not…): the library's own words, made shorter.
		more = []Problem{libraryProblem(err)}
	}
	return append(probs, more...)
}

// libraryProblem turns a jsonschema-go error ("validating root:
// validating /properties/a: uniqueItems: …") into a problem naming the
// parameter when the schema path shows it.
func libraryProblem(err error) Problem {
	msg := err.Error()
	var pointers []string
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			break
		}
		at, after, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		pointers, msg = append(pointers, at), after
	}
	// An anyOf's error lists each alternative's on lines of their own:
	// the first line says enough.
	msg, _, _ = strings.Cut(msg, "\n")
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	msg = strings.ReplaceAll(msg, "<anonymous schema>", "the schema")
	keyword, detail, ok := strings.Cut(msg, ": ")
	if !ok || strings.ContainsAny(keyword, " \"") {
		return Problem{Path: pathOfPointers(pointers), Message: "does not fit the tool's schema: " + msg}
	}
	msg = "does not fit the schema's " + keyword + " rule"
	// The library prints some values with Go's verbs ("%!s(float64=2)"):
	// such a detail would only confuse.
	if detail != "" && !strings.Contains(detail, "%!") {
		msg += " (" + detail + ")"
	}
	return Problem{Path: pathOfPointers(pointers), Message: msg}
}

// pathOfPointers names the argument the library's chain of schema
// pointers leads to: each pointer that extends the one before adds the
// properties it goes through ("/properties/a", then "/properties/a/then":
// a); one that does not (a reference followed) starts from its own place.
func pathOfPointers(pointers []string) string {
	var names []string
	prev := ""
	for _, p := range pointers {
		if _, frag, ok := strings.Cut(p, "#"); ok {
			p = frag // a schema with an $id is named by it
		}
		if !strings.HasPrefix(p, "/") {
			p = "" // the root, or a schema named by its $id alone
		}
		rel := ""
		if strings.HasPrefix(p, prev+"/") && prev != "" || prev == "" && strings.HasPrefix(p, "/") {
			rel = p[len(prev):]
		}
		prev = p
		segs := strings.Split(strings.TrimPrefix(rel, "/"), "/")
		for i := 0; i+1 < len(segs) && segs[i] == "properties"; i += 2 {
			names = append(names, strings.ReplaceAll(strings.ReplaceAll(segs[i+1], "~1", "/"), "~0", "~"))
		}
	}
	return strings.Join(names, ".")
}

// maxProblems bounds the problems one call reports: past a few, more
// lines of the same fault only crowd the model's context.
const maxProblems = 20

// check validates raw arguments and returns them normalised: scalars the
// model sent as strings are converted to the types the schema asks for
// (the XML path yields nothing but strings), and null optional fields are
// dropped. Empty input counts as {}.
func (v *validator) check(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = json.RawMessage("{}")
	}
	var args any
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, v.fail(Problem{Message: fmt.Sprintf(
			"arguments are not valid JSON (%s); send one JSON object with the tool's parameters", jsonErrorText(err))})
	}
	obj, ok := args.(map[string]any)
	if !ok {
		return nil, v.fail(Problem{Message: "arguments must be a JSON object, got " + gotText(args)})
	}
	changed := coerce(v.schema, obj)
	if probs := v.problems(obj); len(probs) > 0 {
		if n := len(probs) - maxProblems; n > 0 {
			probs = append(probs[:maxProblems], Problem{Message: "and " + plural(n, "more problem")})
		}
		return nil, v.fail(probs...)
	}
	if !changed {
		return raw, nil
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("tools: re-encoding arguments of %s: %w", v.tool, err)
	}
	return out, nil
}

func (v *validator) fail(probs ...Problem) *ValidationError {
	return &ValidationError{Tool: v.tool, Problems: probs}
}

func jsonErrorText(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s at byte %d", se.Error(), se.Offset)
	}
	return err.Error()
}

// schemaType returns the single non-null type a schema asks for, and
// whether null is allowed too.
func schemaType(s *schema) (typ string, nullable bool) {
	if s.Type != "" {
		return s.Type, s.Type == "null"
	}
	for _, t := range s.Types {
		if t == "null" {
			nullable = true
		} else if typ == "" {
			typ = t
		}
	}
	if typ == "" {
		switch {
		case s.Properties != nil:
			typ = "object"
		case s.Items != nil || s.PrefixItems != nil:
			typ = "array"
		}
	}
	return typ, nullable
}

// coerce converts, in place, string values to the scalar, array or
// object type their schema asks for when the conversion is exact, and
// removes null values of optional properties that do not allow null. It
// reports whether anything changed.
func coerce(s *schema, obj map[string]any) bool {
	changed := false
	for key, val := range obj {
		ps := s.Properties[key]
		if ps == nil {
			continue
		}
		if val == nil {
			if _, nullable := schemaType(ps); !nullable && !slices.Contains(s.Required, key) {
				delete(obj, key)
				changed = true
			}
			continue
		}
		if nv, ok := coerceValue(ps, val); ok {
			obj[key] = nv
			changed = true
		}
	}
	return changed
}

func coerceValue(s *schema, val any) (any, bool) {
	typ, _ := schemaType(s)
	switch v := val.(type) {
	case string:
		t := strings.TrimSpace(v)
		switch typ {
		case "integer":
			if n, err := strconv.ParseInt(t, 10, 64); err == nil {
				return float64(n), true
			}
		case "number":
			if f, err := strconv.ParseFloat(t, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
				return f, true
			}
		case "boolean":
			switch strings.ToLower(t) {
			case "true":
				return true, true
			case "false":
				return false, true
			}
		case "array", "object":
			var parsed any
			if (strings.HasPrefix(t, "[") || strings.HasPrefix(t, "{")) && json.Unmarshal([]byte(t), &parsed) == nil {
				nv, _ := coerceValue(s, parsed)
				if nv == nil {
					nv = parsed
				}
				return nv, true
			}
			// A lone string where a list of strings is wanted is a
			// one-item list: models do this with queries and commands.
			if typ == "array" && s.Items != nil {
				if it, _ := schemaType(s.Items); it == "string" {
					return []any{v}, true
				}
			}
		}
	case []any:
		changed := false
		for i, item := range v {
			is := s.itemSchema(i)
			if item == nil || is == nil {
				continue
			}
			if nv, ok := coerceValue(is, item); ok {
				v[i] = nv
				changed = true
			}
		}
		return v, changed
	case map[string]any:
		if s.Properties == nil {
			return nil, false
		}
		return v, coerce(s, v)
	}
	return nil, false
}

// Bounds of explain. A recursive schema may describe values nested
// without end, and an applicator (allOf, anyOf, oneOf) walks the value
// again for each of its schemas, which, when they refer back to their own
// definition, multiplies the work at every level. So explain follows a
// value at most maxExplainDepth deep, and the walks under applicators
// share maxExplainSteps; past either bound nothing more is checked there
// (that part passes; the implementation still decodes what it was given)
// while the rest of the arguments is checked as usual, so that no schema
// can stall a call.
const (
	maxExplainDepth = 128
	maxExplainSteps = 1 << 16
)

// maxJudgeSteps bounds the schema applications under applicators (anyOf,
// oneOf, allOf, not, if, references among them) the library may make on
// one call. It walks every alternative with no bound of its own, and a
// failing alternative's error holds its children's, so on a recursive
// schema both its time and its error text grow exponentially with the
// value's depth. Outside applicators the work is linear in the value and
// is not counted.
const maxJudgeSteps = 1 << 12

// affordable reports whether the library can check val against s within
// maxJudgeSteps. It counts the applications as the library makes them:
// every alternative of anyOf and oneOf, not, if, then and else,
// references followed, each item and property below them. A reference
// our reading does not follow (a remote schema) is not counted.
func affordable(s *schema, val any) bool {
	c := coster{steps: maxJudgeSteps}
	return c.cost(s, val, 0)
}

type coster struct {
	applied int // the applicators the walk is inside
	steps   int // left to all of them
}

func (c *coster) cost(s *schema, val any, depth int) bool {
	if s == nil {
		return true
	}
	if depth > 2*maxExplainDepth {
		return false
	}
	if c.applied > 0 {
		if c.steps--; c.steps < 0 {
			return false
		}
	}
	if s.ref != nil || len(s.AllOf)+len(s.AnyOf)+len(s.OneOf)+len(s.Applied) > 0 {
		c.applied++
		ok := c.cost(s.ref, val, depth+1)
		for _, list := range [][]*schema{s.AllOf, s.AnyOf, s.OneOf, s.Applied} {
			for _, sub := range list {
				ok = ok && c.cost(sub, val, depth+1)
			}
		}
		c.applied--
		if !ok {
			return false
		}
	}
	switch v := val.(type) {
	case []any:
		for i, item := range v {
			if !c.cost(s.itemSchema(i), item, depth+1) || !c.cost(s.Contains, item, depth+1) {
				return false
			}
		}
	case map[string]any:
		for k, x := range v {
			if ps, ok := s.Properties[k]; ok {
				if !c.cost(ps, x, depth+1) {
					return false
				}
				continue
			}
			for _, pp := range s.PatternProperties {
				if (pp.re == nil || pp.re.MatchString(k)) && !c.cost(pp.schema, x, depth+1) {
					return false
				}
			}
			if !c.cost(s.AdditionalProperties, x, depth+1) {
				return false
			}
		}
	}
	return true
}

// explainer collects the problems of one call's arguments.
type explainer struct {
	probs []Problem
	// applied counts the applicators the walk is inside; steps the
	// schema applications left to all of them.
	applied int
	steps   int
}

// explain walks the arguments beside our reading of the schema and
// returns one problem per faulty field, in the model's terms. It runs once
// the library has refused the arguments (or, for a call too costly for the
// library, in its place), and checks the keywords of schema, each as JSON
// Schema defines it, with two leniencies that never refuse what the schema
// allows: oneOf is held to "at least one" like anyOf (the keywords passed
// over could tell alternatives apart), and a multiple is judged with a
// tolerance for binary fractions.
func explain(s *schema, val any) []Problem {
	e := &explainer{steps: maxExplainSteps}
	e.explain(s, val, "", 0)
	return e.probs
}

func (e *explainer) explain(s *schema, val any, path string, depth int) {
	s = deref(s)
	if s == nil || depth > maxExplainDepth {
		return
	}
	if e.applied > 0 {
		if e.steps <= 0 {
			return
		}
		e.steps--
	}
	if s.never {
		e.probs = append(e.probs, Problem{Path: path, Message: "not allowed"})
		return
	}
	bad := func(got string) {
		e.probs = append(e.probs, Problem{Path: path, Message: "must be " + describe(s) + ", got " + got})
	}
	if !typeMatches(s, val) {
		bad(gotText(val))
		return
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return jsonEqual(e, val) }) {
		bad(gotText(val))
		return
	}
	if s.Const != nil && !jsonEqual(*s.Const, val) {
		bad(gotText(val))
		return
	}
	switch v := val.(type) {
	case float64:
		if !numberInBounds(s, v) {
			bad(gotText(val))
		}
	case string:
		if s.MinLength != nil || s.MaxLength != nil || s.pattern != nil {
			n := utf8.RuneCountInString(v)
			if s.MinLength != nil && n < *s.MinLength || s.MaxLength != nil && n > *s.MaxLength ||
				s.pattern != nil && !s.pattern.MatchString(v) {
				bad(gotText(val))
			}
		}
	case []any:
		if s.MinItems != nil && len(v) < *s.MinItems || s.MaxItems != nil && len(v) > *s.MaxItems {
			bad(plural(len(v), "item"))
			return
		}
		for i, item := range v {
			if is := s.itemSchema(i); is != nil {
				e.explain(is, item, path+"["+strconv.Itoa(i)+"]", depth+1)
			}
		}
	case map[string]any:
		for _, key := range s.Required {
			if _, ok := v[key]; !ok {
				e.probs = append(e.probs, Problem{Path: joinPath(path, key), Message: "required"})
			}
		}
		if s.Properties == nil && s.AdditionalProperties == nil && s.PatternProperties == nil {
			break
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var unknown []string
		for _, k := range keys {
			if _, ok := caseVariant(s.Properties, k); ok {
				continue // misCased reports it
			}
			if ps, ok := s.Properties[k]; ok {
				e.explain(ps, v[k], joinPath(path, k), depth+1)
			} else if s.matchesPattern(k, func(ps *schema) { e.explain(ps, v[k], joinPath(path, k), depth+1) }) {
				continue
			} else if s.AdditionalProperties != nil {
				if s.AdditionalProperties.never {
					unknown = append(unknown, k)
				} else {
					e.explain(s.AdditionalProperties, v[k], joinPath(path, k), depth+1)
				}
			}
		}
		for _, k := range unknown {
			e.probs = append(e.probs, Problem{Path: joinPath(path, k),
				Message: "unknown parameter; known: " + strings.Join(sortedKeys(s.Properties), ", ")})
		}
	}
	if len(s.AllOf)+len(s.AnyOf)+len(s.OneOf) == 0 {
		return
	}
	e.applied++
	for _, sub := range s.AllOf {
		e.explain(sub, val, path, depth+1)
	}
	for _, alts := range [][]*schema{s.AnyOf, s.OneOf} {
		if len(alts) > 0 {
			e.alternatives(alts, val, path, depth+1)
		}
	}
	e.applied--
}

// misCased finds the keys that differ from a property only in case. Go's
// decoder would give such a key's value to the property, past the checks
// made on the property's own key: the value run would not be the value
// checked. So they are refused though the schema allows them.
func misCased(s *schema, val any, path string, depth int) []Problem {
	s = deref(s)
	if s == nil || depth > maxExplainDepth {
		return nil
	}
	var probs []Problem
	switch v := val.(type) {
	case map[string]any:
		for _, k := range sortedKeys(v) {
			if p, ok := caseVariant(s.Properties, k); ok {
				probs = append(probs, Problem{Path: joinPath(path, k),
					Message: fmt.Sprintf("unknown parameter; names are case-sensitive: use %s", p)})
			} else if ps, ok := s.Properties[k]; ok {
				probs = append(probs, misCased(ps, v[k], joinPath(path, k), depth+1)...)
			}
		}
	case []any:
		for i, item := range v {
			probs = append(probs, misCased(s.itemSchema(i), item, path+"["+strconv.Itoa(i)+"]", depth+1)...)
		}
	}
	return probs
}

// caseVariant reports whether key is not a property but names one when
// case is ignored, and which.
func caseVariant(props map[string]*schema, key string) (string, bool) {
	if _, ok := props[key]; ok {
		return "", false
	}
	for p := range props {
		if strings.EqualFold(p, key) {
			return p, true
		}
	}
	return "", false
}

// matchesPattern reports whether a property name matches one of the
// schema's patternProperties, calling check with the schema of each
// pattern it matches. A pattern Go cannot read counts as matching: the
// name is then neither checked nor called unknown.
func (s *schema) matchesPattern(name string, check func(*schema)) bool {
	matched := false
	for _, pp := range s.PatternProperties {
		switch {
		case pp.re == nil:
			matched = true
		case pp.re.MatchString(name):
			matched = true
			check(pp.schema)
		}
	}
	return matched
}

// alternatives checks a value against anyOf or oneOf: it fits when one
// alternative has no problem. Otherwise the problems of the alternative
// that takes the value's type and has the fewest say most (a missing
// field of the object alternative); when none takes the type, one line
// names them all.
func (e *explainer) alternatives(alts []*schema, val any, path string, depth int) {
	outer := e.probs
	var best []Problem
	for _, a := range alts {
		e.probs = nil
		e.explain(a, val, path, depth)
		if len(e.probs) == 0 {
			e.probs = outer
			return
		}
		if t := deref(a); t != nil && typeMatches(t, val) && (best == nil || len(e.probs) < len(best)) {
			best = e.probs
		}
	}
	e.probs = outer
	if best != nil {
		e.probs = append(e.probs, best...)
		return
	}
	var parts []string
	for _, a := range alts {
		if d := describe(deref(a)); !slices.Contains(parts, d) {
			parts = append(parts, d)
		}
	}
	e.probs = append(e.probs, Problem{Path: path, Message: "must be " + strings.Join(parts, " or ") + ", got " + gotText(val)})
}

// deref follows local references to the schema they name, so that
// messages and docs describe the target; a description beside the
// reference is kept when the target has none.
func deref(s *schema) *schema {
	for range 8 { // a bound, since definitions may refer to each other
		if s == nil || s.ref == nil {
			return s
		}
		target := s.ref
		if s.Description != "" && target.Description == "" {
			withDesc := *target
			withDesc.Description = s.Description
			target = &withDesc
		}
		s = target
	}
	return s
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func typeMatches(s *schema, val any) bool {
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	if len(types) == 0 {
		return true
	}
	got := jsonTypeOf(val)
	for _, t := range types {
		switch t {
		case got:
			return true
		case "number":
			if got == "integer" {
				return true
			}
		case "null", "boolean", "integer", "string", "array", "object":
		default:
			// A type JSON Schema does not name ("any", "file"): the
			// server knows what it meant.
			return true
		}
	}
	return false
}

func jsonTypeOf(val any) string {
	switch v := val.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if v == math.Trunc(v) && !math.IsInf(v, 0) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

// jsonEqual compares two decoded JSON values as JSON Schema does:
// numbers by value, objects regardless of member order.
func jsonEqual(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case bool:
		bv, ok := b.(bool)
		return ok && a == bv
	case float64:
		bv, ok := b.(float64)
		return ok && a == bv
	case string:
		bv, ok := b.(string)
		return ok && a == bv
	case []any:
		bv, ok := b.([]any)
		if !ok || len(a) != len(bv) {
			return false
		}
		for i := range a {
			if !jsonEqual(a[i], bv[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(a) != len(bv) {
			return false
		}
		for k, x := range a {
			y, ok := bv[k]
			if !ok || !jsonEqual(x, y) {
				return false
			}
		}
		return true
	}
	return false
}

func numberInBounds(s *schema, v float64) bool {
	return (s.Minimum == nil || v >= *s.Minimum) && (s.Maximum == nil || v <= *s.Maximum) &&
		(s.ExclusiveMinimum == nil || v > *s.ExclusiveMinimum) &&
		(s.ExclusiveMaximum == nil || v < *s.ExclusiveMaximum) &&
		(s.MultipleOf == nil || isMultiple(v, *s.MultipleOf))
}

// isMultiple reports whether v is a multiple of m, with the tolerance
// binary fractions need (0.3 is not an exact multiple of 0.1 in float64).
// A step that is not positive checks nothing.
func isMultiple(v, m float64) bool {
	if !(m > 0) {
		return true
	}
	q := v / m
	return math.IsInf(q, 0) || math.Abs(q-math.Round(q)) <= 1e-9*math.Max(1, math.Abs(q))
}

// gotText shows the model what it sent, briefly.
func gotText(val any) string {
	switch v := val.(type) {
	case nil:
		return "null"
	case string:
		if utf8.RuneCountInString(v) > 40 {
			v = string([]rune(v)[:40]) + "…"
		}
		return strconv.Quote(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprint(val)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// describe says in words what a schema accepts: "an integer ≥ 1", "an
// array of strings with 2 to 5 items", `one of "low", "high"`. Validation
// messages and the XML tool docs share it.
func describe(s *schema) string {
	if len(s.Enum) > 0 {
		vals := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			j, _ := json.Marshal(e)
			vals[i] = string(j)
		}
		return "one of " + strings.Join(vals, ", ")
	}
	if s.Const != nil {
		j, _ := json.Marshal(*s.Const)
		return "exactly " + string(j)
	}
	typ, nullable := schemaType(s)
	alts := s.AnyOf
	if len(alts) == 0 {
		alts = s.OneOf
	}
	if typ == "" && len(alts) > 0 {
		parts := make([]string, len(alts))
		for i, a := range alts {
			parts[i] = describe(a)
		}
		return strings.Join(parts, " or ")
	}
	var d string
	switch typ {
	case "string":
		d = describeString(s)
	case "integer":
		d = "an integer" + bounds(s)
	case "number":
		d = "a number" + bounds(s)
	case "boolean":
		d = "a boolean"
	case "array":
		d = "an array"
		if s.Items != nil {
			if len(s.Items.Enum) > 0 {
				d += " of values each " + describe(s.Items)
			} else if it, _ := schemaType(s.Items); it != "" {
				d += " of " + pluralType(it)
			}
		}
		d += itemCount(s)
	case "object":
		d = "an object"
	case "null":
		return "null"
	default:
		d = "a value"
	}
	if nullable {
		d += " or null"
	}
	return d
}

func describeString(s *schema) string {
	d := "a string"
	switch {
	case s.MinLength != nil && *s.MinLength == 1 && s.MaxLength == nil:
		d = "a non-empty string"
	case s.MinLength != nil && s.MaxLength != nil:
		d += fmt.Sprintf(" of %d to %d characters", *s.MinLength, *s.MaxLength)
	case s.MinLength != nil:
		d += fmt.Sprintf(" of at least %s", plural(*s.MinLength, "character"))
	case s.MaxLength != nil:
		d += fmt.Sprintf(" of at most %s", plural(*s.MaxLength, "character"))
	}
	if s.Format != "" {
		d += " in " + s.Format + " format"
	}
	if s.Pattern != "" {
		d += " matching /" + s.Pattern + "/"
	}
	return d
}

func pluralType(t string) string {
	switch t {
	case "string", "integer", "number", "boolean", "object", "array":
		return t + "s"
	}
	return "values"
}

func bounds(s *schema) string {
	num := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	var parts []string
	switch {
	case s.Minimum != nil:
		parts = append(parts, "≥ "+num(*s.Minimum))
	case s.ExclusiveMinimum != nil:
		parts = append(parts, "> "+num(*s.ExclusiveMinimum))
	}
	switch {
	case s.Maximum != nil:
		parts = append(parts, "≤ "+num(*s.Maximum))
	case s.ExclusiveMaximum != nil:
		parts = append(parts, "< "+num(*s.ExclusiveMaximum))
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, " and ")
}

func itemCount(s *schema) string {
	switch {
	case s.MinItems != nil && s.MaxItems != nil:
		return fmt.Sprintf(" with %d to %d items", *s.MinItems, *s.MaxItems)
	case s.MinItems != nil && *s.MinItems > 0:
		return " with at least " + plural(*s.MinItems, "item")
	case s.MaxItems != nil:
		return " with at most " + plural(*s.MaxItems, "item")
	}
	return ""
}
