"""The shim's symbol parser, run by the real Ruby (Ripper here; Prism where Ruby ships it)."""

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from gemdoc import shim, symbols

PRISM_BUILD = Path(__file__).resolve().parent.parent / ".prism" / "lib"  # .ci/build_prism.py
BUNDLED_GEMS = ("rake", "minitest", "test-unit", "rexml", "net-imap", "net-smtp", "rbs", "debug")

SOURCE = '''module Outer
  module Middle
    class Inner < Base
      def deep(a, b = 1); end
      def self.build; end
      attr_reader :name
    end
  end
  class Middle::Sibling
    def here; end
  end
  class ::TopLevel
    def top; end
  end
end
'''

PARSE = 'require_relative ARGV[0]; src = $stdin.read; puts JSON.generate(GemdocShim::Symbols.parse(src, "lib/x.rb"))'


def prism_flags() -> list[str]:
    """Ruby flags under which `require "prism"` works: none when this Ruby ships it (3.3+),
    else the build of .ci/build_prism.py. Skips when neither, unless GEMDOC_REQUIRE_PRISM is set
    (CI builds Prism first, so there the Prism branch is always tested)."""
    for flags in ([], ["-I", str(PRISM_BUILD)]):
        if subprocess.run([shim.ruby(), *flags, "-e", 'require "prism"'], capture_output=True).returncode == 0:
            return flags
    if os.environ.get("GEMDOC_REQUIRE_PRISM"):
        pytest.fail("Prism is required but not loadable: run `python3 .ci/build_prism.py`")
    pytest.skip("Prism not loadable: `python3 .ci/build_prism.py` builds it for this Ruby")


def records(source: str = SOURCE, flags: tuple[str, ...] = ()) -> list[dict]:
    done = subprocess.run(
        [shim.ruby(), *flags, "-rjson", "-e", PARSE, str(shim.script().parent / "symbols.rb")],
        input=source, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


def test_nested_definitions_get_their_full_owner_and_lines():
    found = {(r["kind"], r["owner"], r["name"], r["singleton"]): r for r in records()}
    assert ("class", "Outer::Middle", "Inner", False) in found
    deep = found[("method", "Outer::Middle::Inner", "deep", False)]
    assert (deep["line"], deep["end_line"], deep["signature"]) == (4, 4, "def deep(a, b = 1); end")
    assert ("method", "Outer::Middle::Inner", "build", True) in found
    assert ("method", "Outer::Middle::Inner", "name", False) in found
    assert ("method", "Outer::Middle::Sibling", "here", False) in found
    assert ("method", "TopLevel", "top", False) in found
    assert not any("Outer::Outer" in (r["owner"] or "") for r in records())


CALLS = '''class Calls
  attr_reader :base
  # a comment after a one-line definition
  attr_accessor(:left, :right)
  attr_reader(
    :first,
    :last
  )
  define_method("#{kind}_action") { 1 }
  attr_writer :"quoted", :"inter#{polated}"
  define_method(:with_block) do |a|
    a
  end
  def outer
    Class.new { def inner; end }
    define_method(:made_at_run_time) { 3 }
  end
  attr_reader :one,
              :two
  define_method(:nests) { def made_when_called; end }
  alias_method dynamic_name, :target
end
'''


@pytest.mark.parametrize("backend", ["default", "prism"])
def test_calls_that_define_methods_end_on_their_last_line_and_only_static_names_count(backend):
    flags = tuple(prism_flags()) if backend == "prism" else ()
    found = {r["name"]: (r["line"], r["end_line"]) for r in records(CALLS, flags) if r["kind"] == "method"}
    assert found == {
        "base": (2, 2),
        "left": (4, 4),
        "right": (4, 4),
        "first": (5, 8),
        "last": (5, 8),
        "quoted": (10, 10),
        "with_block": (11, 13),
        "outer": (14, 17),
        "one": (18, 19),
        "two": (18, 19),
        "nests": (20, 20),
    }


ALIASES = '''class Aliases
  def original; end
  alias copy original
  alias :symbol_copy :original
  alias == eql?
  alias_method :by_call, :original
  alias_method "by_string", :original
  alias $new_global $old_global
  class << self
    def build; end
    alias make build
  end
end
'''


@pytest.mark.parametrize("backend", ["default", "prism"])
def test_an_alias_is_a_definition_on_its_own_line_under_its_new_name(backend):
    """RDoc documents an alias as a method of its own; without a definition it would have no line."""
    flags = tuple(prism_flags()) if backend == "prism" else ()
    found = {(r["name"], r["singleton"]): (r["line"], r["signature"]) for r in records(ALIASES, flags)
             if r["kind"] == "method"}  # fmt: skip
    assert found == {
        ("original", False): (2, "def original; end"),
        ("copy", False): (3, "alias copy original"),
        ("symbol_copy", False): (4, "alias :symbol_copy :original"),
        ("==", False): (5, "alias == eql?"),
        ("by_call", False): (6, "alias_method :by_call, :original"),
        ("by_string", False): (7, 'alias_method "by_string", :original'),
        ("build", True): (10, "def build; end"),
        ("make", True): (11, "alias make build"),
    }


ON_CONSTANTS = '''module Mail
  class Field; end
  module Parsers
    def Field.build; end
    def Kernel.outside; end
  end
end
class Field
  def Field.again; end
end
module Mail::Compact
  def Field.compact; end
end
'''


ON_OBJECTS = '''class Widget
  def spin; end
  helper = Object.new
  def helper.spin; end
  def (Widget).paren; end
  def (registry.fetch).dynamic; end
  class << helper
    def spin; end
    def hidden; end
  end
  def self.build; end
end
'''


@pytest.mark.parametrize("backend", ["default", "prism"])
def test_a_method_defined_on_an_object_the_source_does_not_name_is_no_definition(backend):
    """``def helper.spin`` and ``class << helper`` define methods on one object, ``def (expr).name`` on whatever
    the expression gives: none is the class's instance method, nor a method of a namespace the source names."""
    flags = tuple(prism_flags()) if backend == "prism" else ()
    found = [(r["owner"], r["name"], r["singleton"], r["line"])
             for r in records(ON_OBJECTS, flags) if r["kind"] == "method"]  # fmt: skip
    assert found == [("Widget", "spin", False, 2), ("Widget", "build", True, 11)]


MODULE_FUNCTIONS = '''module Helpers
  def before; end
  module_function
  def escape; end
  class << self
    private
    def own; end
  end
  module Inner
    def unmarked; end
  end
  def unescape; end
  private
  def hidden; end
  module_function def inline; end
  module_function(:before)
  def self.plain; end
end
module Other
  def escape; end
  Made = Module.new do
    module_function
    def in_block; end
  end
  def after_block; end
end
module Blocks
  module_function()
  Pair = Struct.new(:x) do
    private
  end
  later = -> { public }
  def still; end
end
Loader.on_load do
  module Opened
    module_function
    def in_namespace_in_block; end
  end
end
'''


@pytest.mark.parametrize("backend", ["default", "prism"])
def test_a_def_after_a_bare_module_function_or_named_by_one_is_a_module_function(backend):
    """Ruby makes each ``def`` after a bare ``module_function`` a module function until a bare visibility
    call, and so those it names; a nested namespace, a singleton class and another module are not in that
    mode, nor a block's body (read as a scope of its own, as the blocks real gems call them in are: ``Struct.new``,
    ``Module.new``, ``class_methods``), before or after it, though a namespace opened in a block has its own;
    ``module_function()`` is bare. RDoc files the first kind as public instance methods: the mark lets the reader say
    what they are."""
    flags = tuple(prism_flags()) if backend == "prism" else ()
    found = {(r["owner"], r["name"], r["singleton"]): r.get("module_function", False)
             for r in records(MODULE_FUNCTIONS, flags) if r["kind"] == "method"}  # fmt: skip
    assert found == {
        ("Helpers", "before", False): True, ("Helpers", "escape", False): True, ("Helpers", "own", True): False,
        ("Helpers::Inner", "unmarked", False): False, ("Helpers", "unescape", False): True,
        ("Helpers", "hidden", False): False, ("Helpers", "inline", False): True, ("Helpers", "plain", True): False,
        ("Other", "escape", False): False, ("Other", "in_block", False): False, ("Other", "after_block", False): False,
        ("Blocks", "still", False): True, ("Opened", "in_namespace_in_block", False): True,
    }


PRIVATE_COPIES = """module Esc
  def plain; end
  alias pl plain
  module_function
  def esc; end
  alias h esc
  alias_method :h2, "esc"
  alias_method name, :esc
  alias h3 h
  module_function :h3
  def helper; end
  private_class_method :helper
  private_class_method def self.own; end
  Helper = Module.new { private_class_method :esc }
  class << self
    alias sh own
  end
end
"""


@pytest.mark.parametrize("backend", ["default", "prism"])
def test_an_alias_of_a_module_function_and_one_private_class_method_names_are_private(backend):
    """Ruby's alias copies the method as it is, and a module function's instance copy is private (``alias h esc``:
    private, though RDoc 6.4 files it public); ``private_class_method :helper`` makes a module function's module method
    private too. Not an alias of a public method, nor one ``module_function`` names (a public module method), nor a
    call in a block's body (read as a scope of its own); ``private_class_method def self.own`` RDoc reads itself."""
    flags = tuple(prism_flags()) if backend == "prism" else ()
    found = {(r["owner"], r["name"], r["singleton"]): r.get("private", False)
             for r in records(PRIVATE_COPIES, flags) if r["kind"] == "method"}  # fmt: skip
    assert found == {
        ("Esc", "plain", False): False, ("Esc", "pl", False): False, ("Esc", "esc", False): False,
        ("Esc", "h", False): True, ("Esc", "h2", False): True, ("Esc", "h3", False): False,
        ("Esc", "helper", False): True, ("Esc", "own", True): False, ("Esc", "sh", True): False,
    }


@pytest.mark.parametrize("backend", ["default", "prism"])
def test_a_method_defined_on_a_constant_is_owned_where_ruby_finds_that_constant(backend):
    """`def Field.build` inside `module Mail; module Parsers` is Mail::Field's, as Ruby resolves the
    constant from the innermost namespace outward; `module Mail::Compact` opens one namespace, not
    Mail's too, so its `def Field.compact` is the top-level Field's; a constant the gem defines
    nowhere (Kernel) stays as written."""
    flags = tuple(prism_flags()) if backend == "prism" else ()
    found = {r["name"]: r["owner"] for r in symbols.resolve(records(ON_CONSTANTS, flags)) if r["kind"] == "method"}
    assert found == {"build": "Mail::Field", "outside": "Kernel", "again": "Field", "compact": "Field"}


SINGLETON_BLOCKS = '''module Mail
  class Field; end
  class << Field
    def build; end
    attr_reader :cache
    class << self
      def nested; end
    end
  end
  class << ::Top
    def absolute; end
  end
  class << self
    def top; end
  end
  def plain; end
end
'''


@pytest.mark.parametrize("backend", ["default", "prism"])
def test_methods_in_a_singleton_class_block_of_a_constant_are_that_constants(backend):
    """`class << Field` inside `module Mail` opens Mail::Field's singleton class: its methods and
    attributes are Mail::Field's class methods, not Mail's instance methods; `class << ::Top` is the
    top level's Top, as written."""
    flags = tuple(prism_flags()) if backend == "prism" else ()
    found = {r["name"]: (r["owner"], r["singleton"]) for r in symbols.resolve(records(SINGLETON_BLOCKS, flags))
             if r["kind"] == "method"}  # fmt: skip
    assert found == {"build": ("Mail::Field", True), "cache": ("Mail::Field", True), "nested": ("Mail::Field", True),
                     "absolute": ("Top", True), "top": ("Mail", True), "plain": ("Mail", False)}


def test_prism_and_ripper_give_the_same_records_for_every_file_of_the_bundled_gems():
    done = subprocess.run(
        [shim.ruby(), *prism_flags(), str(Path(__file__).with_name("symbols_backends.rb")),
         str(shim.script().parent), *BUNDLED_GEMS],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    report = json.loads(done.stdout)
    assert report["backend"] == "prism"
    assert report["files"] > 200 and report["records"] > 4_000
    assert report["differing"] == []


def test_a_cross_reference_reads_as_its_target():
    """RDoc's Markdown for a cross-reference is a link to ``rdoc-ref:``, its target hard-wrapped where the
    line is long (Rails' ``#establis`` / ``h_connection``): it is written as the API it names, whole, so
    that search finds ``establish_connection``."""
    text = ("See [match](rdoc-ref:Base#match), [its\ndocs](rdoc-ref:Mail), {spin}[rdoc-ref:Widget#spin] and\n"
            "[Base.establish_connection](rdoc-ref:ConnectionHandling#establis\nh_connection); [a](https://a.b).")
    script = "require 'rdoc'; puts GemdocShim::RiReader.allocate.send(:cross_references, $stdin.read)"
    done = subprocess.run(["ruby", "-r", str(shim.script()), "-e", script], input=text,
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert done.stdout == ("See Base#match, its docs (Mail), Widget#spin and\nBase.establish_connection; "
                           "[a](https://a.b).\n")


def _ns(full, file="lib/x.rb"):
    owner, _, name = full.rpartition("::")
    return {"kind": "class", "owner": owner, "name": name, "singleton": False, "file": file, "line": 1}


def _def(owner, name, file="lib/x.rb", singleton=False):
    return {"kind": "method", "owner": owner, "name": name, "singleton": singleton, "file": file, "line": 2}


def _entry(full, kind="method", file="lib/x.rb"):
    owner, sep, name = full.rpartition("#") if "#" in full else full.rpartition("::")
    if kind in ("class", "module"):
        return {"kind": kind, "full_name": full, "owner": None, "name": full.rpartition("::")[2], "file": file}
    return {"kind": kind, "full_name": full, "owner": owner, "name": name, "singleton": sep == "::", "file": file}


HOSTILE = {
    "thousands of names in one attr_reader line": "  attr_reader " + ", ".join(f":a{i}" for i in range(20_000)) + "\n",
    "module_function naming methods again and again": "  attr_reader " + ",\n    ".join(f":b{i}" for i in range(10_000))
    + "\n" + "".join(f"  module_function :b{i}\n" for i in range(5_000)),
    "module_function naming one name defined again and again":
        "  def a; end\n" * 12_000 + "  module_function :a\n" * 12_000,
    "private_class_method naming one name defined again and again":
        "  module_function\n" + "  def a; end\n" * 12_000 + "  private_class_method :a\n" * 12_000,
    "aliases of one module function again and again": "  module_function\n  def a; end\n" + "  alias b a\n" * 20_000,
    "module_function calls nested deep": "  module_function(" * 1_200 + "begin\n" + "  def a; end\n" * 30_000 + "end"
    + ")" * 1_200 + "\n",
}


@pytest.mark.parametrize("shape", sorted(HOSTILE))
def test_hostile_shapes_parse_in_linear_time(shape):
    """A gem's files are untrusted: shapes cold reviews found quadratic (a signature read per name on one long line;
    each ``module_function :name`` or ``private_class_method :name`` marking every record of that name, or every
    record since, again)."""
    start = time.monotonic()
    assert len(records("module Flood\n" + HOSTILE[shape] + "end\n")) > 10_000
    assert time.monotonic() - start < 5


def test_deep_nesting_and_long_names_keep_the_output_near_the_size_of_the_source():
    """Each record repeats its owner's full name, and a method on a constant the namespaces open there: 300 nested
    modules around 500 ``def X.m`` made 227 MB of output from 12 KB before their bounds (Symbols::MAX_NAME,
    MAX_SCOPE). Nothing in a namespace of a name too long is recorded, nor a method on a constant where the
    namespaces open are too many to resolve it. Real nesting keeps both
    (test_a_method_defined_on_a_constant_is_owned_where_ruby_finds_that_constant)."""
    source = "module Abcdefgh\n" * 300 + "  def X.m; end\n  def m; end\n" * 500 + "end\n" * 300
    found = records(source)
    assert len(json.dumps(found)) < 20 * len(source)
    assert found and all(r["kind"] == "module" for r in found) and not any("scope" in r for r in found)


def test_the_records_of_one_gem_are_bounded():
    """A gem's records take at most Symbols::MAX_OUTPUT bytes of JSON (here lowered to 2,000): the first ones, in file order;
    none after the first that does not fit, in any file (one name given an ``attr_reader`` 100,000 times on a line
    of a long path made 400 MB)."""
    script = (f'require "{shim.script().parent / "symbols.rb"}"; require "json"; '
              "GemdocShim::Symbols.send(:remove_const, :MAX_OUTPUT); GemdocShim::Symbols.const_set(:MAX_OUTPUT, %s); "
              "puts JSON.generate(GemdocShim::Symbols.parse_files(ARGV[0], %%w[a.rb b.rb c.rb]))")  # fmt: skip
    with tempfile.TemporaryDirectory() as root:
        for name in ("a.rb", "b.rb", "c.rb"):
            Path(root, name).write_text("module M\n" + "".join(f"  def m{i}(x, y); end\n" for i in range(12)) + "end\n")
        whole, cut = (json.loads(subprocess.run([shim.ruby(), "-e", script % limit, root], capture_output=True,
                                                text=True, check=True).stdout) for limit in (10**9, 2_000))  # fmt: skip
    assert len(whole) == 39 and 5 < len(cut) < 39 and cut == whole[: len(cut)], cut
    assert sum(len(json.dumps(r, separators=(",", ":"))) for r in cut) <= 2_000


def test_a_module_function_is_located_and_named_as_the_module_method_and_nothing_else_is():
    """A module function's definition locates RDoc's module-method entry (``module_function :mul``) and renames its
    public instance entry (a bare ``module_function``) unless that name is taken; a class method locates no
    instance method of its name (``def self.call`` before ``def call``). One the source makes private (``private``:
    named by ``private_class_method``, an alias of a module function) is no entry, as RDoc keeps private ones out."""
    mf = _def("Mf", "add") | {"module_function": True, "line": 5}
    defs = symbols.index([_ns("Mf"), mf, _def("Mf", "mul") | {"module_function": True, "line": 9},
                          _def("Mf", "hidden") | {"module_function": True},
                          _def("Mf", "taken") | {"module_function": True}, _def("Svc", "call", singleton=True),
                          _def("Svc", "call") | {"line": 7}, _def("Mf", "short") | {"private": True},
                          _def("Mf", "step") | {"module_function": True, "private": True}])  # fmt: skip
    entries = [_entry("Mf#add"), _entry("Mf::mul"), _entry("Mf#taken"), _entry("Mf::taken"), _entry("Svc#call"),
               _entry("Mf#hidden") | {"visibility": "private"}, _entry("Mf#step"), _entry("Mf#short")]  # fmt: skip
    refiled = symbols.refile(entries, defs)
    assert [e["full_name"] for e in refiled] == ["Mf::add", "Mf::mul", "Mf#taken", "Mf::taken", "Svc#call", "Mf#hidden"]
    assert [(symbols.locate(e, defs) or {}).get("line") for e in refiled[:2]] == [5, 9]
    assert symbols.locate(refiled[4], defs)["line"] == 7


def test_entries_rdoc_filed_outside_their_nesting_are_refiled_where_the_source_defines_them():
    """RDoc 6.4 loses its place in a file's nesting (Thor's ``Thor::Error`` filed as ``Error``, Sinatra's
    ``Sinatra::Base`` as ``Sinatra::Helpers::Stream::Base``, ``Sinatra::Helpers#etag`` as
    ``Sinatra::Helpers::Stream#etag``); the source's nesting names them, only where it is unambiguous."""
    from gemdoc import symbols

    defs = symbols.index([
        _ns("Fix"), _ns("Fix::Flange"), _def("Fix::Flange", "tighten"), _ns("Fix::Helpers"), _ns("Fix::Helpers::Stream"),
        _def("Fix::Helpers", "etag"), _ns("Fix::Base"), _def("Fix::Base", "halt"), _ns("Fix::Form"), _def("Fix::Form", "field"),
        _ns("Fix::Builder"), _ns("Fix::Taken"), _ns("Fix::Pair::Twin"), _ns("Fix::Other::Twin"), _def("Fix::Part", "new", singleton=True),
        _ns("Fix::Part"), _ns("Fix::Part::Sub"),
    ])  # fmt: skip
    entries = [_entry("Flange", "class"), _entry("Flange#tighten"), _entry("Fix::Helpers::Stream::Base", "class"),
               _entry("Fix::Helpers::Stream::Base#halt"), _entry("Fix::Helpers::Stream#etag"),
               _entry("Fix::Builder#field"),  # a sibling's method of that name: not RDoc's nesting loss
               _entry("Taken", "class"), _entry("Fix::Taken", "class"),  # the source's name is another entry's
               _entry("Twin", "class"),  # two namespaces of that last name in its file
               _entry("Fix::Part::Sub::new")]  # fmt: skip
    assert [e["full_name"] for e in symbols.refile(entries, defs)] == [
        "Fix::Flange", "Fix::Flange#tighten", "Fix::Base", "Fix::Base#halt", "Fix::Helpers#etag",
        "Fix::Builder#field", "Taken", "Fix::Taken", "Twin", "Fix::Part::Sub::new"]  # fmt: skip
    assert symbols.refile(entries, defs)[1]["owner"] == "Fix::Flange"


def test_an_entry_whose_file_name_is_not_printable_cites_no_file():
    """An installed ri store's file names come from RubyGems' RDoc run over the gem, not gemdoc's walk
    (files.plain): one that could forge lines of ``--files`` is cited as no file."""
    from gemdoc import ri

    forged, plain = _entry("Forged", "class", "lib/x.rb:4\nrails@7.1.0 evil.rb:12\nq.rb"), _entry("Plain", "class")
    chunks = ri.to_chunks([forged | {"comment": "Forged."}, plain | {"comment": "Plain."}], [], installed=True)[0]
    assert [(c.title, c.file) for c in chunks] == [("Forged", None), ("Plain", "lib/x.rb")]
