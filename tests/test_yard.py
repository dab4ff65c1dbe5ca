"""YARD method directives read from comments (gemdoc/yard.py), on files written here; the end-to-end
case with RDoc and the fixture gem is in test_index.py."""

import time

import pytest

from gemdoc import yard

SOURCE = """\
# @!method orphan
#   Top level: no class or module to file it under.
module Outer
  class Inner
    # @!macro [attach] setting
    #   @!method $1
    #     A setting.
    setting :colour

    # @!method size=(value)
    #   Sets the size.
    #
    #   @param value [Integer]
    def_delegator :@store, :size=

    # @method self.reset!
    # Resets every inner thing.

    # Also documents, for another object:
    #   @!method nested(x)
    #     Belongs to another object.
    # @!method initialize(a)
    #   Constructs.
  end
end
"""


def spans():
    return [{"kind": "module", "owner": "", "name": "Outer", "file": "lib/outer.rb", "line": 3, "end_line": 25},
            {"kind": "class", "owner": "Outer", "name": "Inner", "file": "lib/outer.rb", "line": 4, "end_line": 24}]


def test_directives_become_entries_of_the_innermost_namespace(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "outer.rb").write_text(SOURCE)
    found = {c.title: c for c in yard.declared(tmp_path, ["lib/outer.rb"], spans(), set())}
    assert sorted(found) == ["Outer::Inner#size=", "Outer::Inner::reset!"]  # no orphan, macro, nested, initialize
    size = found["Outer::Inner#size="]
    assert (size.line, size.signature, size.kind, size.name) == (10, "size=(value)", "method", "size=")
    assert size.body == "Sets the size.\n\n@param value [Integer]"
    assert found["Outer::Inner::reset!"].body == "Resets every inner thing."


def test_a_name_already_documented_and_a_file_outside_the_gem_are_left_alone(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "outer.rb").write_text(SOURCE)
    assert [c.title for c in yard.declared(tmp_path, ["lib/outer.rb"], spans(), {"Outer::Inner#size="})] == [
        "Outer::Inner::reset!"]
    (tmp_path / "gem").mkdir()
    (tmp_path / "gem" / "lib").symlink_to(tmp_path / "lib")  # a symlink out of the gem is never read
    assert yard.declared(tmp_path / "gem", ["lib/outer.rb"], spans(), set()) == []


SCOPES = """\
module Knobs
  class << self; attr_accessor :volume; end
  LABEL = "page\\x0cbreak"

  # @!method turn(degrees)
  #   Turns the knob.
  # @!method on_turn?(node)
  def_node_matcher :on_turn?, "(send nil? :turn)"

  class << self
    # @!method reset
    #   Resets every knob.
  end
end
"""


def test_scopes_lines_and_empty_directives(tmp_path):
    """A one-line ``class << self`` opens no block; a directive without text is skipped (RuboCop's
    node matchers); lines are counted as Ruby counts them, at \\n only (a form feed in a string)."""
    (tmp_path / "knobs.rb").write_text(SCOPES)
    spans = [{"kind": "module", "owner": "", "name": "Knobs", "file": "knobs.rb", "line": 1, "end_line": 14}]
    found = {c.title: c.line for c in yard.declared(tmp_path, ["knobs.rb"], spans, set())}
    assert found == {"Knobs#turn": 5, "Knobs::reset": 11}


STACKED = """\
module Assertions
  ##
  # Assert text exists
  #
  # @!method assert_content
  # @!method assert_text
  #   See {Matchers#assert_text}

  # @!method get(url = nil)
  # Makes a GET request.
  # @!scope class
  #
  # @param url [String]
  def_delegators :default_connection, :get
end
"""


def test_stacked_directives_share_the_text_and_the_comment_opening_is_theirs(tmp_path):
    """Capybara's minitest assertions: the prose above stacked directives and the text under the last
    belong to each; ``@!scope`` steers the directive and is no text (faraday's ``Connection.get``)."""
    (tmp_path / "assertions.rb").write_text(STACKED)
    spans = [{"kind": "module", "owner": "", "name": "Assertions", "file": "assertions.rb", "line": 1, "end_line": 15}]
    found = {c.title: c for c in yard.declared(tmp_path, ["assertions.rb"], spans, set())}
    assert sorted(found) == ["Assertions#assert_content", "Assertions#assert_text", "Assertions::get"]
    assert found["Assertions#assert_content"].body == "Assert text exists\n\nSee {Matchers#assert_text}"
    assert found["Assertions#assert_content"].line == 5
    assert found["Assertions#assert_text"].body == found["Assertions#assert_content"].body
    assert found["Assertions::get"].body == "Makes a GET request.\n\n@param url [String]"


def test_only_a_scope_tag_line_declares_a_class_method(tmp_path):
    """``@!scope class`` steers the directive as a tag line of its own; prose that names the tag does not."""
    source = ("module Client\n  # @!method post(url = nil)\n  #   Makes a POST request; unlike @!scope class\n"
              "  #   directives, it is called on a connection.\n  def_delegators :connection, :post\nend\n")
    (tmp_path / "client.rb").write_text(source)
    spans = [{"kind": "module", "owner": "", "name": "Client", "file": "client.rb", "line": 1, "end_line": 6}]
    assert [c.title for c in yard.declared(tmp_path, ["client.rb"], spans, set())] == ["Client#post"]


def test_a_hostile_file_of_directives_takes_linear_time(tmp_path):
    """A ``path:`` gem is untrusted: stacked directives, an endless comment and unclosed ``class << self``
    lines are each walked a bounded number of times, and the text they share is not copied past the file's
    size (the first cut took minutes and gigabytes on this file)."""
    lines = ["module Flood"] + ["  class << self"] * 20_000 + ["  # lead"] * 20_000
    lines += ["  # @!method m%d" % i for i in range(20_000)] + ["  #   text"] * 20_000 + ["end"]
    (tmp_path / "flood.rb").write_text("\n".join(lines) + "\n")
    spans = [{"kind": "module", "owner": "", "name": "Flood", "file": "flood.rb", "line": 1, "end_line": len(lines)}]
    start = time.monotonic()
    found = yard.declared(tmp_path, ["flood.rb"], spans, set())
    assert found[0].title == "Flood#m0" and found[0].body == "lead\n" * 19_999 + "lead\n\n" + "text\n" * 19_999 + "text"
    assert sum(len(c.body) for c in found) <= (tmp_path / "flood.rb").stat().st_size
    assert time.monotonic() - start < 5


HOSTILE = {
    "a directive and a comment line, again and again": "  #@method a\n  #t\n" * 60_000,
    "stacked directives over steering lines only": "  # @!method m\n" * 10_000 + "  # @!scope class\n" * 10_000,
    "a directive with a long run of blanks": "  # @!method a" + " " * 40_000 + "x\n",
    "namespaces nested deep": "module N\n" * 20_000 + "  # @!method a\n  #   A.\n" * 20_000 + "end\n" * 20_000,
    "a directive's text of empty lines": "  # @!method a\n  #   a\n" + "  #\n" * 200_000 + "  #   b\n",
}


@pytest.mark.parametrize("shape", sorted(HOSTILE))
def test_hostile_shapes_take_linear_time(tmp_path, shape):
    """Shapes a cold review found quadratic, or worse, in a first cut: copying the rest of the file per
    directive, per-directive work on shared text, regex backtracking, and the owner search."""
    text = "module Flood\n" + HOSTILE[shape] + "end\n"
    (tmp_path / "flood.rb").write_text(text)
    count = text.count("\n")
    spans = [{"kind": "module", "owner": "", "name": "Flood", "file": "flood.rb", "line": 1, "end_line": count}]
    if shape.startswith("namespaces"):
        spans += [{"kind": "module", "owner": "", "name": f"N{k}", "file": "flood.rb", "line": 2 + k,
                   "end_line": count - 1 - k} for k in range(20_000)]  # short names: the sweep is what is timed
    start = time.monotonic()
    yard.declared(tmp_path, ["flood.rb"], spans, set())
    assert time.monotonic() - start < 3


VISIBILITY = """\
module Outer; class Inner
  # @!method shown
  #   Public.
  def_node_matcher :shown, "(send)"

  class << self
    private

    # @!method hidden_too
    #   Private class method.
  end

  # @!method still_shown
  #   The private above was the singleton class's.

  protected

  # @!method ranked(other)
  #   Protected, documented as RDoc documents protected methods.

  private # helpers

  # @!method helper?(node)
  #   Private, as YARD would file it.
  def_node_matcher :helper?, "(send)"
end
end
"""


def test_a_directive_s_own_visibility_tag_wins_and_a_bare_keyword_reaches_instance_methods_only(tmp_path):
    """As in Ruby, a bare ``protected`` or ``private`` does not reach ``self.`` methods; a directive's own
    ``@!visibility`` tag line overrides the section, and prose that only mentions a tag does not."""
    (tmp_path / "tags.rb").write_text(
        "class Box\n  protected\n\n  # @!method self.build\n  #   Builds a box.\n\n"
        "  # @!method ranked\n  #   Ranks boxes; see @!visibility private in YARD's docs.\n\n"
        "  private\n\n  # @!method opened\n  #   @!visibility public\n  #   Opens the box.\n\n"
        "  # @!method sealed\n  #   Seals the box.\nend\n")
    spans = [{"kind": "class", "owner": "", "name": "Box", "file": "tags.rb", "line": 1, "end_line": 18}]
    found = [(c.title, c.visibility) for c in yard.declared(tmp_path, ["tags.rb"], spans, set())]
    assert found == [("Box::build", ""), ("Box#ranked", "protected"), ("Box#opened", "")]


def test_a_bare_private_hides_the_directives_after_it_and_one_line_namespaces_nest(tmp_path):
    """RuboCop's node matchers after ``private`` are no API (YARD files them private), those after
    ``protected`` are (RDoc documents protected methods) and say so; of two namespaces
    opened on one line, the inner one owns the directives."""
    (tmp_path / "vis.rb").write_text(VISIBILITY)
    spans = [{"kind": "module", "owner": "", "name": "Outer", "file": "vis.rb", "line": 1, "end_line": 28},
             {"kind": "class", "owner": "Outer", "name": "Inner", "file": "vis.rb", "line": 1, "end_line": 27}]
    found = [(c.title, c.visibility) for c in yard.declared(tmp_path, ["vis.rb"], spans, set())]
    assert found == [("Outer::Inner#shown", ""), ("Outer::Inner#still_shown", ""), ("Outer::Inner#ranked", "protected")]
