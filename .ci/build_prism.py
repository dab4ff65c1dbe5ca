"""Build Prism for this machine's Ruby when it does not ship one, so the shim's Prism branch is tested.

    python3 .ci/build_prism.py [DEST]    # default DEST: .prism beside .ci; prints DEST/lib

Ruby ships Prism from 3.3; Debian 12's Ruby is 3.1. Prism's C sources and Ruby files are taken
from the Ruby 3.3 release tarball in Debian's archive (trixie's ruby3.3 source package, its
sha256 checked against the archive's Sources index) and compiled against this Ruby with mkmf.
tests/test_symbols.py finds the result in .prism/lib.
"""

import hashlib
import lzma
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

MIRROR = "http://deb.debian.org/debian"
SUITE = "trixie"
PACKAGE = "ruby3.3"
EXTCONF = """require "mkmf"
$INCFLAGS << " -I$(srcdir) -I$(srcdir)/prism -I$(srcdir)/prism/util"
$srcs = Dir.glob("#{$srcdir}/prism/**/*.c").map { |f| File.basename(f) }
$VPATH << "$(srcdir)/prism" << "$(srcdir)/prism/util"
append_cflags("-fvisibility=hidden")
create_makefile("prism/prism")
"""


def ruby_has_prism() -> bool:
    return subprocess.run(["ruby", "-e", 'require "prism"'], capture_output=True).returncode == 0


def orig_tarball() -> tuple[str, str]:
    """URL and sha256 of the package's upstream tarball, from the suite's Sources index."""
    with urllib.request.urlopen(f"{MIRROR}/dists/{SUITE}/main/source/Sources.xz", timeout=120) as response:
        index = lzma.decompress(response.read()).decode()
    stanza = next(s for s in index.split("\n\n") if s.startswith(f"Package: {PACKAGE}\n"))
    directory = next(line.split(": ", 1)[1] for line in stanza.splitlines() if line.startswith("Directory: "))
    sha256_block = stanza.split("Checksums-Sha256:\n", 1)[1]
    for line in sha256_block.splitlines():
        if not line.startswith(" "):
            break
        digest, _, name = line.split()
        if ".orig.tar." in name:
            return f"{MIRROR}/{directory}/{name}", digest
    raise SystemExit(f"no upstream tarball listed for {PACKAGE} in {SUITE}")


def download(url: str, digest: str, target: Path) -> None:
    with urllib.request.urlopen(url, timeout=300) as response:
        data = response.read()
    if hashlib.sha256(data).hexdigest() != digest:
        raise SystemExit(f"sha256 mismatch for {url}")
    target.write_bytes(data)


def extract(tarball: Path, work: Path) -> Path:
    """Prism's C sources and its Ruby library, out of Ruby's source tree (regular files only)."""
    with tarfile.open(tarball) as tar:
        top = tar.getnames()[0].split("/")[0]
        for member in tar:
            relative = member.name.removeprefix(f"{top}/")
            if member.isfile() and relative.startswith(("prism/", "lib/prism")) and "/templates/" not in relative:
                target = work / top / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(tar.extractfile(member).read())
    return work / top


def build(source: Path, dest: Path) -> Path:
    ext = source / "ext-build"
    ext.mkdir()
    shutil.copytree(source / "prism", ext / "prism")
    (ext / "extconf.rb").write_text(EXTCONF)
    subprocess.run(["ruby", "extconf.rb"], cwd=ext, check=True, capture_output=True)
    subprocess.run(["make", "-j4"], cwd=ext, check=True, capture_output=True)
    lib = dest / "lib"
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(source / "lib", lib)
    shutil.copy(ext / "prism.so", lib / "prism" / "prism.so")
    subprocess.run(["ruby", "-I", str(lib), "-e", 'require "prism"; Prism.parse("1")'], check=True)
    return lib


def main() -> None:
    dest = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / ".prism"
    if ruby_has_prism():
        print("this Ruby ships Prism; nothing to build", file=sys.stderr)
        return
    with tempfile.TemporaryDirectory() as tmp:
        url, digest = orig_tarball()
        tarball = Path(tmp) / url.rsplit("/", 1)[1]
        download(url, digest, tarball)
        print(build(extract(tarball, Path(tmp)), dest))


if __name__ == "__main__":
    main()
