"""The crates of the workspace, for the checks in .ci/ that read every one
(module-cycles, module-tables): each folder under the project's tops that
has a Cargo.toml and a src/ folder, fuzz targets and build output left out."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def crate_dirs():
    """Every crate folder, relative to the repository's root, sorted."""
    found = []
    for top in ("runtime", "stage1-callbacks", "stage2-coroutines", "stage3-crawler", "examples"):
        base = os.path.join(ROOT, top)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if d not in ("target", "node_modules", "fuzz", "src")]
            if "Cargo.toml" in filenames and os.path.isdir(os.path.join(dirpath, "src")):
                found.append(os.path.relpath(dirpath, ROOT))
    return sorted(found)
