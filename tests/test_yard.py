"""YARD method directives read from comments (gemdoc/yard.py), on files written here; the end-to-end
case with RDoc and the fixture gem is in test_index.py."""

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
