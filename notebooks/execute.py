"""Execute notebooks headless, as CI does: python notebooks/execute.py [NOTEBOOK ...]

With no argument, runs every notebooks/*.ipynb. Each runs in a fresh python3 kernel
with notebooks/ as its working directory; the first cell that raises stops it, and the
script exits 1 after printing the error. Executed copies (with outputs) are written to
target/notebooks/executed/ for inspection; the committed notebooks stay without outputs.
"""

import pathlib
import sys

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent


def main(paths: list[str]) -> int:
    notebooks = [pathlib.Path(p).resolve() for p in paths] or sorted(HERE.glob("*.ipynb"))
    if not notebooks:
        print("no notebooks found", file=sys.stderr)
        return 1
    out_dir = ROOT / "target" / "notebooks" / "executed"
    out_dir.mkdir(parents=True, exist_ok=True)
    failed = 0
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        client = NotebookClient(
            nb,
            timeout=900,
            kernel_name="python3",
            resources={"metadata": {"path": str(path.parent)}},
        )
        try:
            client.execute()
            status = "ok"
        except CellExecutionError as e:
            status = "FAILED"
            failed += 1
            print(e, file=sys.stderr)
        nbformat.write(nb, out_dir / path.name)
        print(f"{status}: {path.relative_to(ROOT)} ({len(nb.cells)} cells)")
    print(f"notebooks executed: {len(notebooks) - failed} ok, {failed} with errors")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
