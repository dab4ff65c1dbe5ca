"""The shim's symbol parser, run by the real Ruby (Ripper here; Prism where Ruby ships it)."""

import json
import subprocess

from gemdoc import shim

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


def records() -> list[dict]:
    done = subprocess.run(
        [shim.ruby(), "-rjson", "-e", PARSE, str(shim.script().parent / "symbols.rb")],
        input=SOURCE, capture_output=True, text=True, check=True,
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
