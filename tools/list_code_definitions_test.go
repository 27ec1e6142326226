package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/workspace"
)

// defsFiles is a minimal Files over a folder for these internal tests
// (toolstest imports this package, so it cannot be used here).
type defsFiles struct {
	Files // nil: only the methods below are called
	roots *workspace.Roots
	open  map[string]string
}

func (f *defsFiles) Resolve(p string) (string, error) { return f.roots.Resolve(p) }
func (f *defsFiles) Display(abs string) string        { return f.roots.Display(abs) }
func (f *defsFiles) Root() string                     { return f.roots.Primary() }
func (f *defsFiles) Disk() (*workspace.Roots, error)  { return f.roots, nil }
func (f *defsFiles) Ignored(abs string, isDir bool) bool {
	return filepath.Base(abs) == "ignored"
}
func (f *defsFiles) Read(_ context.Context, abs string) (FileText, error) {
	if t, ok := f.open[abs]; ok {
		return FileText{Text: t, Exists: true, Open: true}, nil
	}
	data, err := os.ReadFile(abs)
	if os.IsNotExist(err) {
		return FileText{}, nil
	}
	return FileText{Text: string(data), Exists: err == nil}, err
}

func defsTree(t *testing.T, files map[string]string) *defsFiles {
	t.Helper()
	root := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	roots, err := workspace.NewRoots(root)
	if err != nil {
		t.Fatal(err)
	}
	return &defsFiles{roots: roots, open: map[string]string{}}
}

func defsRun(t *testing.T, files Files, path string) Result {
	t.Helper()
	tool, err := Builtin(NameListCodeDefinitions, WorkspaceTools(files)[NameListCodeDefinitions])
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"path": path})
	inv, err := tool.Build(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := inv.Execute(context.Background(), ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

const defsGoSource = `// Package p is a sample.
package p

import "fmt"

// Kind is a kind.
type Kind string

type (
	Pair[T any] struct{ a, b T }
	Doer interface{ Do() error }
	Alias = Kind
)

const (
	A Kind = "a"
	B Kind = "b"
)

var debug bool

func New(name string,
	size int) *Pair[int] {
	return nil
}

func (p *Pair[T]) Swap() { p.a, p.b = p.b, p.a }

func init() { fmt.Println() }
`

func TestDefsGo(t *testing.T) {
	items, err := defsGo(defsGoSource)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		got = append(got, fmt.Sprintf("%d %s", it.line, it.text))
	}
	want := []string{
		"7 type Kind string",
		"10 type Pair[T any] struct",
		"11 type Doer interface",
		"12 type Alias = Kind",
		"15 const A, B",
		"20 var debug",
		"22 func New(name string, size int) *Pair[int]",
		"27 func (p *Pair[T]) Swap()",
		"29 func init()",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	items, err = defsGo("package p\nfunc Good() {}\nfunc Bad( {\n")
	if err == nil || len(items) == 0 || items[0].text != "func Good()" {
		t.Errorf("broken file: items %+v, err %v", items, err)
	}
}

// defsCase is a source text whose definition lines are marked: a line
// ending in "// D" is a top-level definition, "// M" a member; every
// other line must not be listed. The markers are comments in every
// language here except Python, Ruby and shell, which use "# D" / "# M".
type defsCase struct {
	lang, src string
}

var defsCases = []defsCase{
	{"TypeScript", `import { x } from "y";

export interface Options { // D
  name: string;
}
export type ID = string; // D
export enum Color { Red, Green } // D
export const DEFAULT = 5; // D
const helper = (a: number) => a * 2; // D
export async function load(url: string): Promise<void> { // D
  if (url) {
    return;
  }
}
export default class Store<T> extends Base { // D
  private items: T[] = [];
  static create(): Store<any> { // M
    return new Store();
  }
  constructor(private readonly db: Db) { // M
    super();
  }
  async fetch(id: ID): Promise<T> { // M
    for (const x of this.items) {
      if (x) { return x; }
    }
  }
  handle = async (e: Event) => { // M
    console.log(e);
  };
  get size(): number { // M
    return this.items.length;
  }
  #secret() {} // M
}
declare namespace NS { // D
  function inside(): void; // D
}
/*
export function commented() {}
*/
module.exports.thing = 1; // D
exports.other = 2; // D
`},
	{"Python", `"""Module doc."""
import os

MAX_SIZE = 10  # D
other = 5

def top(a, b):  # D
    def nested():
        pass
    return a

class Widget(Base):  # D
    """Doc."""
    LIMIT = 3

    @property
    def size(self):  # M
        return 1

    async def load(self):  # M
        class Inner:
            pass

    class Meta:  # M
        pass

@decorator
async def handler(event):  # D
    pass
`},
	{"Rust", `use std::fmt;

pub struct Point { // D
    x: i32,
}

pub(crate) enum Shape { Circle, Square } // D
pub struct Unit; // D
const LIMIT: usize = 4; // D

impl Point { // D
    pub fn new(x: i32) -> Self { // M
        Point { x }
    }
    #[inline]
    fn len(&self) -> usize { // M
        let f = |a| a;
        0
    }
}

pub trait Draw { // D
    fn draw(&self); // M
    type Output; // M
}

pub async fn serve() -> Result<(), Error> { // D
    Ok(())
}

mod tests { // D
    fn helper() {} // D
}

macro_rules! square { // D
    ($x:expr) => { $x * $x };
}
`},
	{"Java", `package com.example;

import java.util.List;

@Service
public class UserService extends Base implements Api { // D
    private static final int LIMIT = 10;
    private final List<String> names = new ArrayList<>();

    public UserService(Repo repo) { // M
        this.repo = repo;
    }

    @Override
    public List<User> findAll(int page) throws IOException { // M
        if (page > 0) {
            return repo.all();
        }
        return null;
    }

    static <T> T first(List<T> xs) { // M
        return xs.get(0);
    }

    public enum State { ON, OFF } // M
}

interface Api { // D
    List<User> findAll(int page) throws IOException; // M
    default void ping() {} // M
}

record Pair(int a, int b) {} // D
`},
	{"C#", `using System;

namespace Demo.App // D
{
    public class Greeter : IGreeter // D
    {
        private readonly string name;

        public Greeter(string name) // M
        {
            this.name = name;
        }

        public async Task<string> GreetAsync(int times) // M
        {
            return name;
        }

        public string Name { get; set; }
    }

    internal interface IGreeter // D
    {
        Task<string> GreetAsync(int times); // M
    }
}
`},
	{"Kotlin", `package demo

data class User(val name: String) // D

fun main(args: Array<String>) { // D
    println("hi")
}

class Repo { // D
    fun find(id: Int): User? { // M
        return null
    }
    private suspend fun load() = Unit // M
}

val greeting = "hello" // D
`},
	{"C", `#include <stdio.h>
#define MAX 10 // D

typedef struct { // D
    int x;
} point;

struct node { // D
    struct node *next;
};

static int helper(int a); 

int
main(int argc, char **argv) // D
{
    if (argc > 1) {
        return helper(argc);
    }
    return 0;
}

static int helper(int a) { // D
    return a;
}

const char *name(void) { // D
    return "x";
}
`},
	{"C++ header", `#pragma once
#include <string>

namespace app { // D

class Widget : public Base { // D
 public:
  Widget(); // M
  explicit Widget(int size); // M
  virtual ~Widget(); // M
  std::string name() const; // M
  static Widget* create(const Config& c); // M

 private:
  int size_;
  struct Impl; // M
};

int free_function(int a, int b); // D

}  // namespace app
`},
	{"Ruby", `require "json"

module Billing # D
  class Invoice < Base # D
    attr_reader :total

    def initialize(total) # D
      @total = total
    end

    def self.build(data) # D
      new(data["total"])
    end

    def paid? # D
      true
    end
  end
end
`},
	{"PHP", `<?php
namespace App;

final class Invoice extends Model { // D
    public function __construct(private int $total) {} // M
    protected static function build(array $data): self { // M
        return new self($data['total']);
    }
}

function helper($x) { // D
    return $x;
}
`},
	{"Swift", `import Foundation

public struct Point { // D
    var x: Int
    init(x: Int) { // M
        self.x = x
    }
    mutating func move(by d: Int) { // M
        x += d
    }
}

extension Point: CustomStringConvertible { // D
    public var description: String { "\(x)" }
}

@MainActor
final class ViewModel: ObservableObject { // D
    func load() async { // M
    }
}

func helper() -> Int { 1 } // D
`},
	{"shell", `#!/bin/sh
set -e

usage() { # D
  echo "usage"
}

function build { # D
  go build ./...
}

main() { # D
  usage
}
`},
}

func TestDefsScanByLanguage(t *testing.T) {
	for _, c := range defsCases {
		t.Run(c.lang, func(t *testing.T) {
			lines := strings.Split(c.src, "\n")
			want := map[int]bool{} // line → member
			for i, l := range lines {
				switch {
				case strings.HasSuffix(l, "// D") || strings.HasSuffix(l, "# D"):
					want[i+1] = false
				case strings.HasSuffix(l, "// M") || strings.HasSuffix(l, "# M"):
					want[i+1] = true
				}
			}
			got := defsScan(defsRules(c.lang), c.src)
			seen := map[int]bool{}
			for _, it := range got {
				seen[it.line] = true
				member, ok := want[it.line]
				switch {
				case !ok:
					t.Errorf("line %d listed but is no definition: %q", it.line, lines[it.line-1])
				case member != it.member && c.lang != "Ruby":
					t.Errorf("line %d listed with member=%v, want %v: %q", it.line, it.member, member, lines[it.line-1])
				}
				if strings.HasSuffix(it.text, "{") {
					t.Errorf("line %d summary keeps its brace: %q", it.line, it.text)
				}
			}
			for n := range want {
				if !seen[n] {
					t.Errorf("line %d not listed: %q", n, lines[n-1])
				}
			}
		})
	}
}

func TestListCodeDefinitionsTool(t *testing.T) {
	var big strings.Builder
	for i := range 300 {
		fmt.Fprintf(&big, "func F%d() {}\n", i)
	}
	files := defsTree(t, map[string]string{
		"pkg/a.go":         defsGoSource,
		"pkg/b.py":         "def hello():\n    pass\n",
		"pkg/notes.md":     "# not code\n",
		"pkg/broken.go":    "package p\nfunc Good() {}\nfunc Bad( {\n",
		"pkg/many.go":      "package p\n" + big.String(),
		"pkg/empty.ts":     "// nothing here\n",
		"pkg/sub/c.go":     "package sub\nfunc Deep() {}\n",
		"pkg/ignored/d.go": "package d\nfunc Hidden() {}\n",
		"docs/readme.md":   "text",
	})
	res := defsRun(t, files, "pkg")
	out := res.Content
	for _, w := range []string{
		"pkg/a.go (Go)\n  7 | type Kind string\n",
		"  22 | func New(name string, size int) *Pair[int]\n",
		"pkg/b.py (Python)\n  1 | def hello():\n",
		"pkg/broken.go (Go) [it does not parse (line 3: ",
		"  2 | func Good()\n",
		"pkg/empty.ts (TypeScript)\n  (no definitions found)\n",
		"  [100 more definitions not shown]\n",
		"[Subfolders, not read: sub/.]",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	for _, n := range []string{"notes.md", "Deep", "Hidden", "F250"} {
		if strings.Contains(out, n) {
			t.Errorf("output holds %q", n)
		}
	}

	// One file, with an open buffer's unsaved text.
	abs := filepath.Join(files.Root(), "pkg", "b.py")
	files.open[abs] = "class Unsaved:\n    def m(self):\n        pass\n"
	res = defsRun(t, files, "pkg/b.py")
	if want := "pkg/b.py (Python)\n  1 | class Unsaved:\n  2 |   def m(self):\n"; res.Content != want {
		t.Errorf("got %q, want %q", res.Content, want)
	}

	for _, c := range []struct{ path, want string }{
		{"docs", "No source files directly in docs"},
		{"missing", "Not found: missing."},
		{"pkg/notes.md", "is not a source file this tool reads"},
		{"/etc", "outside the workspace"},
	} {
		res := defsRun(t, files, c.path)
		if !strings.Contains(res.Content, c.want) {
			t.Errorf("%s: %q lacks %q", c.path, res.Content, c.want)
		}
	}
}
