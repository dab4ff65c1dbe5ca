import os

from gemdoc import prose


def make(root, files):
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())


def test_which_files_are_prose_and_their_types(tmp_path):
    make(
        tmp_path,
        {
            "README": "r",
            "README.md": "r",
            "GETTING_STARTED.md": "g",
            "CHANGELOG.md": "c",
            "History.rdoc": "h",
            "LICENSE.txt": "l",
            "Manifest.txt": "m",
            "guides/a/b.md": "g",
            "doc/usage.rdoc": "d",
            "docs/api.markdown": "d",
            "doc/ri/cache.md": "never",
            "doc/html/index.html": "<p>",
            "doc/app.js": "x",
            "doc/ja/usage.md": "日本語",
            "doc/README.zh-CN.md": "中文",
            "lib/foo.rb": "code",
            "doc/big.md": "x" * (prose.MAX_BYTES + 1),
            "doc/binary.md": b"\x00\x01\x02",
        },
    )
    os.symlink("..", tmp_path / "doc" / "loop")
    os.symlink(tmp_path / "README.md", tmp_path / "doc" / "linked.md")
    found = {f.relative: f.source_type for f in prose.discover(tmp_path)}
    assert found == {
        "README": "readme",
        "README.md": "readme",
        "GETTING_STARTED.md": "readme",
        "CHANGELOG.md": "changelog",
        "History.rdoc": "changelog",
        "guides/a/b.md": "guides",
        "doc/usage.rdoc": "doc",
        "docs/api.markdown": "doc",
    }
    with_languages = {f.relative for f in prose.discover(tmp_path, all_languages=True)}
    assert {"doc/ja/usage.md", "doc/README.zh-CN.md"} <= with_languages


def test_foreign_markers():
    assert prose.is_foreign("doc/ja/index.md")
    assert prose.is_foreign("README.ja.md")
    assert prose.is_foreign("README_zh-CN.md")
    assert prose.is_foreign("docs/ko/guide.md")
    assert not prose.is_foreign("docs/japanese-food.md")
    assert not prose.is_foreign("doc/kramdown.md")
