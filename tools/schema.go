package tools

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/cline-ls/cline-ls/toolspec"
)

// schema is a tool's parameter schema as our coercions, messages and tool
// docs read it: the JSON Schema keywords tool schemas use. Fields are
// named after their keywords. Whether arguments fit is jsonschema-go's to
// decide (see argSchema); the keywords not here are passed over by this
// reading only. Built-in tools use nothing else (a test holds them to
// it). A schema is read-only once parsed.
type schema struct {
	// Type is "type" given as one name, Types as a list; at most one is
	// set.
	Type  string
	Types []string
	Enum  []any
	Const *any

	MultipleOf       *float64
	Minimum          *float64
	Maximum          *float64
	ExclusiveMinimum *float64
	ExclusiveMaximum *float64

	MinLength *int
	MaxLength *int
	Pattern   string
	// pattern is Pattern compiled, nil when Go's regexp cannot read it
	// (lookahead and the like): such a pattern is described, not checked.
	pattern *regexp.Regexp
	Format  string

	// PrefixItems are the schemas of the first items, one per position
	// (also "items" given as a list, as drafts before 2020-12 write it);
	// Items is the schema of the items after them.
	PrefixItems []*schema
	Items       *schema
	MinItems    *int
	MaxItems    *int

	Properties           map[string]*schema
	Required             []string
	AdditionalProperties *schema
	PatternProperties    []patternSchema

	AllOf []*schema
	AnyOf []*schema
	OneOf []*schema

	// Ref is a local reference ("#", "#/$defs/name", any JSON pointer
	// into the document); ref is its target, found when the whole
	// document is parsed.
	Ref         string
	ref         *schema
	Defs        map[string]*schema
	Definitions map[string]*schema

	Description string

	// Applied and Contains are read only to bound the work of checking
	// a value (see affordable): Applied are the subschemas applied to the
	// value itself that no field above holds (not, if, then, else,
	// dependentSchemas), Contains the one applied to each item.
	Applied  []*schema
	Contains *schema

	// never is the schema false (or {"not": {}}): no value fits.
	never bool
}

// itemSchema is the schema of the item at index i of an array.
func (s *schema) itemSchema(i int) *schema {
	if i < len(s.PrefixItems) {
		return s.PrefixItems[i]
	}
	return s.Items
}

// patternSchema is one member of patternProperties.
type patternSchema struct {
	pattern string
	re      *regexp.Regexp // nil when Go's regexp cannot read pattern
	schema  *schema
}

// parseSchema reads a schema from its parsed JSON. A keyword we read
// whose value has the wrong shape ("minLength": "3") makes the schema
// unusable, as does a reference outside the document or to nothing in
// it.
func parseSchema(n *toolspec.Node) (*schema, error) {
	p := &schemaParser{byNode: map[*toolspec.Node]*schema{}}
	s, err := p.parse(n, "")
	if err != nil {
		return nil, err
	}
	// Parsing a target met only through a reference (under a keyword
	// not read, such as components) may add references of its own.
	for i := 0; i < len(p.refs); i++ {
		r := p.refs[i]
		if name, ok := strings.CutPrefix(r.Ref, "#"); ok && name != "" && !strings.HasPrefix(name, "/") {
			// An anchor: followed when a schema parsed so far names it.
			r.ref = p.anchors[name]
			continue
		}
		target, err := toolspec.ResolvePointer(n, r.Ref)
		if err != nil {
			// An anchor or a pointer to nothing: our reading leaves it
			// unconstrained; the library resolves what can be.
			continue
		}
		t, ok := p.byNode[target]
		if !ok {
			if t, err = p.parse(target, strings.TrimPrefix(r.Ref, "#")); err != nil {
				return nil, err
			}
		}
		r.ref = t
	}
	for _, d := range p.dynRefs {
		if t := p.anchors[d.anchor]; t != nil {
			d.s.Applied = append(d.s.Applied, t)
		}
	}
	return s, nil
}

type schemaParser struct {
	// byNode maps each subschema's JSON to its parsed form, for $ref.
	byNode map[*toolspec.Node]*schema
	// refs are the schemas with a $ref still to resolve.
	refs []*schema
	// anchors are the schemas by their $anchor (or a draft 7 "$id":
	// "#name").
	anchors map[string]*schema
	dynRefs []dynRef
}

// dynRef is a schema with a $dynamicRef to an anchor of the document.
type dynRef struct {
	s      *schema
	anchor string
}

func (p *schemaParser) parse(n *toolspec.Node, at string) (*schema, error) {
	s := new(schema)
	p.byNode[n] = s
	switch n.Kind {
	case toolspec.Bool:
		s.never = n.Str == "false"
		return s, nil
	case toolspec.Object:
	default:
		return nil, fmt.Errorf("schema%s is not an object or a boolean", where(at))
	}
	var minimum, maximum *float64
	var exclMinBool, exclMaxBool bool
	for i, k := range n.Keys {
		v := n.Vals[i]
		kat := at + "/" + k
		bad := func(want string) error { return fmt.Errorf("%s must be %s", kat[1:], want) }
		var err error
		switch k {
		case "type":
			switch v.Kind {
			case toolspec.String:
				s.Type = v.Str
			case toolspec.Array:
				s.Types = []string{}
				for _, t := range v.Vals {
					if t.Kind != toolspec.String {
						return nil, bad("a type name or a list of them")
					}
					s.Types = append(s.Types, t.Str)
				}
			default:
				return nil, bad("a type name or a list of them")
			}
		case "enum":
			if v.Kind != toolspec.Array {
				return nil, bad("an array")
			}
			s.Enum = make([]any, len(v.Vals))
			for j, e := range v.Vals {
				s.Enum[j] = nodeValue(e)
			}
		case "const":
			c := nodeValue(v)
			s.Const = &c
		case "multipleOf":
			s.MultipleOf, err = numberOf(v, bad)
		case "minimum":
			minimum, err = numberOf(v, bad)
		case "maximum":
			maximum, err = numberOf(v, bad)
		case "exclusiveMinimum":
			// A boolean is draft 4's form: it makes minimum exclusive.
			if v.Kind == toolspec.Bool {
				exclMinBool = v.Str == "true"
			} else {
				s.ExclusiveMinimum, err = numberOf(v, bad)
			}
		case "exclusiveMaximum":
			if v.Kind == toolspec.Bool {
				exclMaxBool = v.Str == "true"
			} else {
				s.ExclusiveMaximum, err = numberOf(v, bad)
			}
		case "minLength":
			s.MinLength, err = countOf(v, bad)
		case "maxLength":
			s.MaxLength, err = countOf(v, bad)
		case "minItems":
			s.MinItems, err = countOf(v, bad)
		case "maxItems":
			s.MaxItems, err = countOf(v, bad)
		case "pattern":
			if v.Kind != toolspec.String {
				return nil, bad("a string")
			}
			s.Pattern = v.Str
			s.pattern, _ = regexp.Compile(v.Str)
		case "format":
			s.Format, err = stringOf(v, bad)
		case "description":
			s.Description, err = stringOf(v, bad)
		case "$ref":
			// Only a JSON pointer or an anchor in this document is
			// followed here; a remote reference is the library's to
			// resolve.
			if s.Ref, err = stringOf(v, bad); err == nil && strings.HasPrefix(s.Ref, "#") {
				p.refs = append(p.refs, s)
			}
		case "$dynamicRef":
			// Resolved like an anchor, only for the bound on the
			// library's work (its dynamic scope is the library's).
			if v.Kind == toolspec.String && strings.HasPrefix(v.Str, "#") {
				p.dynRefs = append(p.dynRefs, dynRef{s, strings.TrimPrefix(v.Str, "#")})
			}
		case "$anchor", "$dynamicAnchor", "$id":
			if name, ok := strings.CutPrefix(v.Str, "#"); v.Kind == toolspec.String && (k != "$id" || ok) {
				if k != "$id" {
					name = v.Str
				}
				if p.anchors == nil {
					p.anchors = map[string]*schema{}
				}
				if _, dup := p.anchors[name]; !dup {
					p.anchors[name] = s
				}
			}
		case "items":
			if v.Kind == toolspec.Array {
				s.PrefixItems, err = p.parseList(v, kat, bad)
			} else {
				s.Items, err = p.parse(v, kat)
			}
		case "prefixItems":
			s.PrefixItems, err = p.parseList(v, kat, bad)
		case "additionalProperties":
			s.AdditionalProperties, err = p.parse(v, kat)
		case "not":
			// Only the schema false in its long form is explained; the
			// library judges any other.
			if v.Kind == toolspec.Object && len(v.Keys) == 0 || v.Kind == toolspec.Bool && v.Str == "true" {
				s.never = true
			}
			err = p.applied(s, v, kat)
		case "if", "then", "else":
			err = p.applied(s, v, kat)
		case "dependentSchemas":
			if v.Kind == toolspec.Object {
				for j, name := range v.Keys {
					if err = p.applied(s, v.Vals[j], kat+"/"+name); err != nil {
						break
					}
				}
			}
		case "contains":
			if v.Kind == toolspec.Object || v.Kind == toolspec.Bool {
				s.Contains, err = p.parse(v, kat)
			}
		case "required":
			if v.Kind != toolspec.Array {
				return nil, bad("an array of names")
			}
			s.Required = make([]string, 0, len(v.Vals))
			for _, r := range v.Vals {
				if r.Kind != toolspec.String {
					return nil, bad("an array of names")
				}
				s.Required = append(s.Required, r.Str)
			}
		case "properties":
			s.Properties, err = p.parseMap(v, kat, bad)
		case "$defs":
			s.Defs, err = p.parseMap(v, kat, bad)
		case "definitions":
			s.Definitions, err = p.parseMap(v, kat, bad)
		case "patternProperties":
			if v.Kind != toolspec.Object {
				return nil, bad("an object of schemas")
			}
			for j, pat := range v.Keys {
				sub, err := p.parse(v.Vals[j], kat+"/"+pat)
				if err != nil {
					return nil, err
				}
				re, _ := regexp.Compile(pat)
				s.PatternProperties = append(s.PatternProperties, patternSchema{pat, re, sub})
			}
		case "allOf":
			s.AllOf, err = p.parseList(v, kat, bad)
		case "anyOf":
			s.AnyOf, err = p.parseList(v, kat, bad)
		case "oneOf":
			s.OneOf, err = p.parseList(v, kat, bad)
		}
		if err != nil {
			return nil, err
		}
	}
	s.Minimum, s.Maximum = minimum, maximum
	if exclMinBool && minimum != nil && s.ExclusiveMinimum == nil {
		s.Minimum, s.ExclusiveMinimum = nil, minimum
	}
	if exclMaxBool && maximum != nil && s.ExclusiveMaximum == nil {
		s.Maximum, s.ExclusiveMaximum = nil, maximum
	}
	return s, nil
}

// applied reads a subschema into s.Applied; a value that is no schema is
// left to the library to refuse.
func (p *schemaParser) applied(s *schema, v *toolspec.Node, at string) error {
	if v.Kind != toolspec.Object && v.Kind != toolspec.Bool {
		return nil
	}
	sub, err := p.parse(v, at)
	if err == nil {
		s.Applied = append(s.Applied, sub)
	}
	return err
}

func (p *schemaParser) parseMap(n *toolspec.Node, at string, bad func(string) error) (map[string]*schema, error) {
	if n.Kind != toolspec.Object {
		return nil, bad("an object of schemas")
	}
	m := make(map[string]*schema, len(n.Keys))
	for i, k := range n.Keys {
		sub, err := p.parse(n.Vals[i], at+"/"+k)
		if err != nil {
			return nil, err
		}
		m[k] = sub
	}
	return m, nil
}

func (p *schemaParser) parseList(n *toolspec.Node, at string, bad func(string) error) ([]*schema, error) {
	if n.Kind != toolspec.Array {
		return nil, bad("an array of schemas")
	}
	list := make([]*schema, len(n.Vals))
	for i, v := range n.Vals {
		sub, err := p.parse(v, at+"/"+strconv.Itoa(i))
		if err != nil {
			return nil, err
		}
		list[i] = sub
	}
	return list, nil
}

func where(at string) string {
	if at == "" {
		return ""
	}
	return " at " + at[1:]
}

func numberOf(n *toolspec.Node, bad func(string) error) (*float64, error) {
	if n.Kind != toolspec.Number {
		return nil, bad("a number")
	}
	f, err := strconv.ParseFloat(n.Str, 64)
	if err != nil {
		return nil, bad("a number")
	}
	return &f, nil
}

// countOf reads a length or item count: an integer, possibly written
// with a fraction of zero (3.0).
func countOf(n *toolspec.Node, bad func(string) error) (*int, error) {
	f, err := numberOf(n, bad)
	if err != nil || *f != math.Trunc(*f) || math.Abs(*f) > math.MaxInt32 {
		return nil, bad("an integer")
	}
	c := int(*f)
	return &c, nil
}

func stringOf(n *toolspec.Node, bad func(string) error) (string, error) {
	if n.Kind != toolspec.String {
		return "", bad("a string")
	}
	return n.Str, nil
}

// value converts parsed JSON to the values encoding/json decodes into
// an interface: float64 numbers, []any, map[string]any.
func nodeValue(n *toolspec.Node) any {
	switch n.Kind {
	case toolspec.Bool:
		return n.Str == "true"
	case toolspec.Number:
		f, _ := strconv.ParseFloat(n.Str, 64)
		return f
	case toolspec.String:
		return n.Str
	case toolspec.Array:
		a := make([]any, len(n.Vals))
		for i, v := range n.Vals {
			a[i] = nodeValue(v)
		}
		return a
	case toolspec.Object:
		m := make(map[string]any, len(n.Keys))
		for i, k := range n.Keys {
			m[k] = nodeValue(n.Vals[i])
		}
		return m
	}
	return nil
}
